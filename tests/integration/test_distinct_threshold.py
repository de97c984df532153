"""Distinct with ``rankingScoreThreshold``: the hit count honours the threshold, on 1 and 3 shards.

The count with distinct is the candidates the threshold keeps, minus those sharing a value with the
page's kept hits (which stay). Every expectation is computed here from the documents' scores, read
from a search without distinct or threshold that ranks every candidate.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.search_support import make_index, search
from tests.support.cluster import RunningCluster

WORDS = ["red", "apple", "blue", "green", "amber", "river", "stone"]


def _docs() -> list[dict[str, Any]]:
    rng = random.Random(3)
    docs: list[dict[str, Any]] = []
    for i in range(150):
        doc: dict[str, Any] = {"id": i, "text": " ".join(rng.choices(WORDS, k=rng.randint(2, 6)))}
        if rng.random() < 0.9:
            tag = rng.randint(0, 30)
            doc["tag"] = [f"t{tag}", f"t{tag + 1}"] if rng.random() < 0.3 else f"t{tag}"
        docs.append(doc)
    return docs


DOCS = _docs()
QUERY = "red apple river"


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    settings = {"filterableAttributes": ["tag"], "searchableAttributes": ["text"]}
    with RunningCluster(shards=1) as one, RunningCluster(shards=3) as three:
        for running in (one, three):
            make_index(running, "tagged", DOCS, settings)
        yield one, three


def _values(doc: dict[str, Any]) -> set[str]:
    tag = doc.get("tag")
    return set() if tag is None else set(tag if isinstance(tag, list) else [tag])


def _ranked(running: RunningCluster) -> list[tuple[dict[str, Any], float]]:
    """Every candidate with its score, best first (one shard and three agree, test_search_shards)."""
    body = search(running, "tagged", q=QUERY, limit=1000, showRankingScore=True, attributesToRetrieve=["id"])
    assert body["estimatedTotalHits"] == len(body["hits"])
    return [(DOCS[hit["id"]], hit["_rankingScore"]) for hit in body["hits"]]


def _expected(
    ranked: list[tuple[dict[str, Any], float]], threshold: float, wanted: int
) -> tuple[list[int], int]:
    """The page's ids (greedy distinct over the passing documents) and the hit count."""
    passing = [doc for doc, score in ranked if score >= threshold]
    seen: set[str] = set()
    kept: list[dict[str, Any]] = []
    for doc in passing:
        if not _values(doc) & seen:
            seen |= _values(doc)
            kept.append(doc)
    page = kept[:wanted]
    shown = {value for doc in page for value in _values(doc)}
    count = sum(1 for doc in passing if doc in page or not _values(doc) & shown)
    return [doc["id"] for doc in page], count


@pytest.mark.parametrize("threshold", [0.2, 0.5, 0.8])
@pytest.mark.parametrize("window", [(0, 0), (0, 5), (3, 10), (0, 60)])
def test_distinct_count_honours_the_threshold(
    clusters: tuple[RunningCluster, RunningCluster], threshold: float, window: tuple[int, int]
) -> None:
    offset, limit = window
    ranked = _ranked(clusters[0])
    assert _ranked(clusters[1]) == ranked
    ids, count = _expected(ranked, threshold, offset + limit)
    unthresholded = _expected(ranked, 0.0, offset + limit)[1]
    for running in clusters:
        params: dict[str, Any] = {"q": QUERY, "distinct": "tag", "rankingScoreThreshold": threshold}
        body = search(running, "tagged", **params, offset=offset, limit=limit, attributesToRetrieve=["id"])
        assert [hit["id"] for hit in body["hits"]] == ids[offset:]
        assert body["estimatedTotalHits"] == count
        paged = search(running, "tagged", **params, page=2, hitsPerPage=4)
        assert paged["totalHits"] == _expected(ranked, threshold, 8)[1]
    if threshold > 0.2:
        assert count < unthresholded, "the threshold must matter for this case"
