"""Multi-search with semantic and hybrid queries (search.md §2.2, §2.3), on 1 and 3 shards.

Expectations are the reference engine's answers on the same documents (``vector_support.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.search_support import (
    make_index,
    one_and_three_shards,
)
from tests.integration.vector_support import (
    APPLE,
    DOCS,
    EMBEDDER,
    SETTINGS,
    post,
    semantic,
    shard_count_cluster,  # noqa: F401 (the `cluster` fixture)
)
from tests.support.client import client_for
from tests.support.cluster import RunningCluster

INDEX, OTHER = "hybrid", "sorted"
OTHER_SETTINGS: dict[str, Any] = {
    **SETTINGS,
    "rankingRules": ["sort", "words", "typo", "n:asc", "exactness"],
    "embedders": {
        EMBEDDER: {"source": "userProvided", "dimensions": 3, "distribution": {"mean": 0.7, "sigma": 0.2}}
    },
}
HYBRID = semantic([0, 1, 0], 0.5, q="apple")


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with one_and_three_shards(INDEX, DOCS, SETTINGS) as running:
        for cluster in running:
            make_index(cluster, OTHER, DOCS, OTHER_SETTINGS)
        yield running


def multi_search(cluster: RunningCluster, body: dict[str, Any]) -> dict[str, Any]:
    response = post(cluster, "/multi-search", body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_separate_queries_answer_as_single_searches(cluster: RunningCluster) -> None:
    queries = [
        {"indexUid": INDEX, **HYBRID, "limit": 3, "retrieveVectors": True},
        {"indexUid": INDEX, "q": "apple"},
    ]
    first, second = multi_search(cluster, {"queries": queries})["results"]
    assert [hit["id"] for hit in first["hits"]] == [3, 7, 1]
    assert (first["queryVector"], first["estimatedTotalHits"], first["semanticHitCount"]) == (
        [0.0, 1.0, 0.0],
        7,
        2,
    )
    assert list(first)[:4] == ["indexUid", "hits", "query", "queryVector"]
    assert "semanticHitCount" not in second
    assert second["estimatedTotalHits"] == 4


def test_federated_hybrid_and_semantic_queries(cluster: RunningCluster) -> None:
    """Semantic hits compete by their similarity times the query's weight; an index two queries
    name counts the union of both (the hybrid one's vector leg: every document)."""
    body = multi_search(
        cluster,
        {
            "federation": {"limit": 6},
            "queries": [
                {"indexUid": INDEX, **HYBRID, "showRankingScore": True},
                {"indexUid": INDEX, "q": "car", "showRankingScore": True},
                {
                    "indexUid": OTHER,
                    **semantic([1, 0, 0]),
                    "retrieveVectors": True,
                    "federationOptions": {"weight": 0.9},
                },
            ],
        },
    )
    hits = [(hit["_federation"]["queriesPosition"], hit["id"]) for hit in body["hits"]]
    assert hits == [(0, 3), (0, 7), (0, 1), (0, 2), (1, 4), (2, 1)]
    assert [hit["_rankingScore"] for hit in body["hits"][:5]] == pytest.approx(
        [1.0, 1.0, APPLE, APPLE, APPLE]
    )
    assert body["hits"][5]["_federation"] == {
        "indexUid": OTHER,
        "queriesPosition": 2,
        "weightedRankingScore": 0.9,
    }
    assert list(body["hits"][0]) == ["id", "title", "color", "n", "_federation", "_rankingScore"]
    assert list(body["hits"][5]) == ["id", "title", "color", "n", "_vectors", "_federation"]
    assert body["queryVectors"] == {"2": [1.0, 0.0, 0.0]}
    assert list(body)[:2] == ["hits", "queryVectors"]
    assert (body["estimatedTotalHits"], body["semanticHitCount"]) == (14, 3)
    assert list(body)[-1] == "semanticHitCount"


def test_federated_query_vectors_and_metadata_order(cluster: RunningCluster) -> None:
    queries = [{"indexUid": INDEX, **HYBRID, "retrieveVectors": True}, {"indexUid": INDEX, "q": "car"}]
    body = multi_search(
        cluster, {"federation": {"limit": 6, "showPerformanceDetails": True}, "queries": queries}
    )
    assert body["queryVectors"] == {"0": [0.0, 1.0, 0.0]}
    assert (body["estimatedTotalHits"], body["semanticHitCount"]) == (7, 2)
    assert list(body)[-2:] == ["semanticHitCount", "performanceDetails"]


def test_federated_semantic_error_names_the_query(cluster: RunningCluster) -> None:
    queries = [{"indexUid": INDEX, "q": "apple", "hybrid": {"embedder": EMBEDDER, "semanticRatio": 1.0}}]
    response = post(cluster, "/multi-search", {"federation": {}, "queries": queries})
    assert response.status_code == 400
    assert response.json()["code"] == "vector_embedding_error"
    assert response.json()["message"].startswith("Inside `.queries[0]`: Error while generating embeddings: ")


def test_official_client_federated_search(cluster: RunningCluster) -> None:
    result = client_for(cluster).multi_search(
        [{"indexUid": INDEX, **HYBRID}, {"indexUid": INDEX, "q": "car"}], federation={"limit": 3}
    )
    assert [hit["id"] for hit in result["hits"]] == [3, 7, 1]
    assert result["semanticHitCount"] == 2


@pytest.mark.parametrize(
    ("limit", "colors"),
    [
        (2, {"green": 1, "red": 2, "x": 1}),  # two `apple` hits suffice: the keyword candidates
        (20, {"blue": 1, "green": 1, "red": 3, "x": 2}),  # the vector leg ran: every document
    ],
)
def test_federated_facets_of_a_hybrid_query_count_what_its_search_counts(
    cluster: RunningCluster, limit: int, colors: dict[str, int]
) -> None:
    """``facetsByIndex`` (and ``mergeFacets``) of a hybrid query count the documents its own search
    counts at the federation's depth, as the reference does."""
    single = post(cluster, f"/indexes/{INDEX}/search", {**HYBRID, "facets": ["color"], "limit": limit}).json()
    assert single["facetDistribution"] == {"color": colors}
    federation: dict[str, Any] = {"limit": limit, "facetsByIndex": {INDEX: ["color"]}}
    queries = [{"indexUid": INDEX, **HYBRID}]
    body = multi_search(cluster, {"federation": federation, "queries": queries})
    assert body["facetsByIndex"] == {INDEX: {"distribution": {"color": colors}, "stats": {}}}
    merged = multi_search(cluster, {"federation": {**federation, "mergeFacets": {}}, "queries": queries})
    assert merged["facetDistribution"] == {"color": colors}
