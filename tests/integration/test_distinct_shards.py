"""Distinct with array values (search.md §1.8) gives the same page on 1 and 3 shards.

A document excludes every later one sharing any of its values; one that is itself excluded excludes
nothing. Chains (``[a, b]``, ``[b, c]``, ...) spread over shards are where a shard's own deduplication
goes wrong: the expected page is the greedy walk computed here over the documents in rank order.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.search_support import one_and_three_shards, search
from tests.support.cluster import RunningCluster


def _docs() -> list[dict[str, Any]]:
    rng = random.Random(5)
    docs: list[dict[str, Any]] = []
    for i in range(150):
        start = rng.randint(0, 60)
        tags: Any = [f"t{start}", f"t{start + 1}"] if rng.random() < 0.8 else f"t{start}"
        if rng.random() < 0.1:
            tags = [f"t{start}", f"t{start + 1}", f"t{start + 2}"]
        docs.append({"id": i, "rank": rng.random(), "tags": tags})
    return docs


DOCS = _docs()


def expected(docs: list[dict[str, Any]]) -> list[int]:
    seen: set[str] = set()
    kept = []
    for doc in sorted(docs, key=lambda doc: -doc["rank"]):
        values = set(doc["tags"] if isinstance(doc["tags"], list) else [doc["tags"]])
        if not values & seen:
            seen |= values
            kept.append(doc["id"])
    return kept


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    settings = {"sortableAttributes": ["rank"], "filterableAttributes": ["tags"]}
    with one_and_three_shards("chains", DOCS, settings) as pair:
        yield pair


def _strip(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key not in ("processingTimeMs", "requestUid")}


@pytest.mark.parametrize("window", [(0, 10), (0, 100), (5, 7), (20, 20)])
def test_array_distinct_pages_match_one_shard(
    clusters: tuple[RunningCluster, RunningCluster], window: tuple[int, int]
) -> None:
    offset, limit = window
    want = expected(DOCS)
    bodies = [
        search(cluster, "chains", sort=["rank:desc"], distinct="tags", offset=offset, limit=limit)
        for cluster in clusters
    ]
    assert [hit["id"] for hit in bodies[0]["hits"]] == want[offset : offset + limit]
    assert _strip(bodies[0]) == _strip(bodies[1])
