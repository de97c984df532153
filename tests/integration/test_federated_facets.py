"""``federation.facetsByIndex`` with several queries on one index (search.md §2.3), on 1 and 3 shards.

The facets of an index count the union of the candidates of every query naming it: a document that
two queries match counts once, one that only a later query matches counts too. Expectations are
computed here from the documents.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.facet_support import expected_facets
from tests.integration.search_support import make_index
from tests.support.cluster import RunningCluster

WORDS = ["red", "blue", "green", "amber"]


def _docs() -> list[dict[str, Any]]:
    rng = random.Random(11)
    docs = []
    for i in range(200):
        doc: dict[str, Any] = {
            "id": i,
            "text": " ".join(rng.sample(WORDS, 2)),
            "year": rng.choice([1990, 2000, 2010]),
        }
        doc["genre"] = (
            rng.choice(["Drama", "drama", "Comedy", "Sci-Fi"]) if rng.random() < 0.7 else ["Drama", "Noir"]
        )
        docs.append(doc)
    return docs


DOCS = _docs()
SETTINGS = {"filterableAttributes": ["genre", "year"]}


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with RunningCluster(shards=1) as one, RunningCluster(shards=3) as three:
        for running in (one, three):
            make_index(running, "films", DOCS, SETTINGS)
            make_index(running, "films2", DOCS[:50], SETTINGS)
        yield one, three


def _federated(
    running: RunningCluster, queries: list[dict[str, Any]], federation: dict[str, Any]
) -> dict[str, Any]:
    response = httpx.post(
        f"{running.url}/multi-search", json={"queries": queries, "federation": federation}, timeout=30
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _has(doc: dict[str, Any], word: str) -> bool:
    return word in doc["text"].split()


def test_facets_count_the_union_of_an_index_queries(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    queries = [
        {"indexUid": "films", "q": "red"},
        {"indexUid": "films2"},
        {"indexUid": "films", "q": "amber", "filter": "year = 1990"},
        {"indexUid": "films", "q": "green", "matchingStrategy": "frequency", "filter": "genre = noir"},
    ]
    union = [
        doc
        for doc in DOCS
        if _has(doc, "red")
        or (_has(doc, "amber") and doc["year"] == 1990)
        or (_has(doc, "green") and "Noir" in doc["genre"])
    ]
    # the later queries add documents the first misses, and share some with it
    assert len(union) > len([doc for doc in DOCS if _has(doc, "red")])
    expected = {field: expected_facets(union, field)[0] for field in ("genre", "year")}
    stats = {"year": expected_facets(union, "year")[1]}
    federation = {"facetsByIndex": {"films": ["genre", "year"], "films2": ["year"]}}
    for running in clusters:
        body = _federated(running, queries, federation)
        assert body["facetsByIndex"]["films"] == {"distribution": expected, "stats": stats}
        assert body["facetsByIndex"]["films2"]["distribution"] == {
            "year": expected_facets(DOCS[:50], "year")[0]
        }
        merged = _federated(running, queries, {**federation, "mergeFacets": {}})
        year_50 = expected_facets(DOCS[:50], "year")[0]
        assert merged["facetDistribution"] == {
            "genre": expected["genre"],
            "year": {value: count + year_50.get(value, 0) for value, count in expected["year"].items()},
        }


def test_one_query_per_index_is_unchanged(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    queries = [{"indexUid": "films", "q": "blue", "filter": "year > 1995"}]
    matched = [doc for doc in DOCS if _has(doc, "blue") and doc["year"] > 1995]
    for running in clusters:
        body = _federated(running, queries, {"facetsByIndex": {"films": ["genre"]}})
        assert body["facetsByIndex"]["films"]["distribution"] == {
            "genre": expected_facets(matched, "genre")[0]
        }
