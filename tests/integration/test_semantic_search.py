"""Semantic search (search.md §1.3, §1.5, §1.6, §7.6): ranking by the query's vector alone.

Every test runs on a 1-shard and a 3-shard cluster holding the same documents and expects the same
answer, the reference engine's on those documents (``vector_support.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.search_support import (
    assert_error,
    ids,
    make_index,
    one_and_three_shards,
    search,
)
from tests.integration.vector_support import (
    DOCS,
    EMBEDDER,
    GREEN,
    GREEN_TO_Y,
    SETTINGS,
    TWO_VECTORS,
    counts,
    post,
    scores,
    semantic,
    shard_count_cluster,  # noqa: F401 (the `cluster` fixture)
)
from tests.support.client import client_for
from tests.support.cluster import RunningCluster

INDEX = "vectors"
DIMENSIONS = "Invalid vector dimensions: expected: `3`, found: `2`."
SHIFTED = "shifted"
"""Sort first, a custom rule after ``typo``, a ``distribution``, a ``distinctAttribute``."""
SHIFTED_SETTINGS: dict[str, Any] = {
    **SETTINGS,
    "rankingRules": ["sort", "words", "typo", "n:asc", "exactness"],
    "embedders": {
        EMBEDDER: {"source": "userProvided", "dimensions": 3, "distribution": {"mean": 0.7, "sigma": 0.2}}
    },
}


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with one_and_three_shards(INDEX, DOCS, SETTINGS) as running:
        for cluster in running:
            make_index(cluster, SHIFTED, DOCS, SHIFTED_SETTINGS)
        yield running


def test_hits_by_similarity_then_documents_without_vector(cluster: RunningCluster) -> None:
    body = search(cluster, INDEX, **semantic([1, 0, 0], showRankingScore=True, showRankingScoreDetails=True))
    assert ids(body) == [1, 2, 7, 3, 4, 6, 5]
    assert scores(body) == pytest.approx([1.0, GREEN, TWO_VECTORS, 0.5, 0.5, 0.0, 0.0], abs=1e-7)
    details = [hit["_rankingScoreDetails"] for hit in body["hits"]]
    assert details[0] == {"vectorSort": {"order": 0, "similarity": 1.0}}
    assert details[-1] == {"vectorSort": {"order": 0, "similarity": None}}
    assert counts(body) == {
        "query": "",
        "limit": 20,
        "offset": 0,
        "estimatedTotalHits": 7,
        "semanticHitCount": 7,
    }
    assert list(body)[-1] == "semanticHitCount"


def test_official_client_search_with_vector(cluster: RunningCluster) -> None:
    result = (
        client_for(cluster)
        .index(INDEX)
        .search("", {"vector": [0, 1, 0], "hybrid": {"embedder": EMBEDDER, "semanticRatio": 1.0}, "limit": 3})
    )
    assert [hit["id"] for hit in result["hits"]] == [3, 7, 2]
    assert result["semanticHitCount"] == 3


def test_page_window_and_counts(cluster: RunningCluster) -> None:
    body = search(cluster, INDEX, **semantic([1, 0, 0], limit=2, offset=1))
    assert ids(body) == [2, 7]
    assert (body["estimatedTotalHits"], body["semanticHitCount"]) == (7, 2)
    body = search(cluster, INDEX, **semantic([1, 0, 0], hitsPerPage=2, page=2))
    assert ids(body) == [7, 3]
    assert (body["totalHits"], body["totalPages"]) == (7, 4)


def test_filter_applies_inside_the_vector_search(cluster: RunningCluster) -> None:
    body = search(cluster, INDEX, **semantic([1, 0, 0], filter="color = red", showRankingScore=True))
    assert ids(body) == [1, 4, 5]
    assert scores(body) == [1.0, 0.5, 0.0]
    assert body["estimatedTotalHits"] == 3
    body = search(cluster, INDEX, **semantic([1, 0, 0], filter="n > 1", limit=1))
    assert ids(body) == [2]


def test_sort_orders_equal_similarities(cluster: RunningCluster) -> None:
    body = search(cluster, INDEX, **semantic([1, 0, 0], sort=["n:desc"], showRankingScoreDetails=True))
    assert ids(body) == [1, 2, 7, 4, 3, 6, 5]
    assert body["hits"][0]["_rankingScoreDetails"] == {
        "vectorSort": {"order": 0, "similarity": 1.0},
        "n:desc": {"order": 1, "value": 1.0},
    }


def test_threshold_counts_every_document_reaching_it(cluster: RunningCluster) -> None:
    """As the reference's totals in page mode; its estimate after a short page (explored buckets
    only: 7 for ``limit: 1``) would depend on the shard count here, so the count is exact."""
    body = search(cluster, INDEX, **semantic([1, 0, 0], rankingScoreThreshold=0.6))
    assert ids(body) == [1, 2, 7]
    assert body["estimatedTotalHits"] == 3
    body = search(cluster, INDEX, **semantic([1, 0, 0], rankingScoreThreshold=0.6, limit=1))
    assert (ids(body), body["estimatedTotalHits"]) == ([1], 3)
    body = search(cluster, INDEX, **semantic([1, 0, 0], rankingScoreThreshold=0.6, hitsPerPage=2))
    assert (body["totalHits"], body["totalPages"]) == (3, 2)


def test_query_vector_with_retrieve_vectors(cluster: RunningCluster) -> None:
    body = search(cluster, INDEX, **semantic([1, 0, 0], retrieveVectors=True, limit=1))
    assert body["queryVector"] == [1.0, 0.0, 0.0]
    assert list(body)[:3] == ["hits", "query", "queryVector"]
    assert body["hits"][0]["_vectors"] == {EMBEDDER: {"embeddings": [[1.0, 0.0, 0.0]], "regenerate": False}}
    assert "queryVector" not in search(cluster, INDEX, **semantic([1, 0, 0], limit=1))


def test_text_is_not_highlighted_without_keyword_search(cluster: RunningCluster) -> None:
    body = search(cluster, INDEX, **semantic([0, 1, 0], q="apple", attributesToHighlight=["title"], limit=2))
    assert ids(body) == [3, 7]
    assert body["hits"][1]["_formatted"]["title"] == "two vectors apple"
    assert body["estimatedTotalHits"] == 7


def test_rules_placement_distribution_and_distinct(cluster: RunningCluster) -> None:
    """``vectorSort`` stands at the first relevancy rule; ``sort`` listed before it decides first;
    the distribution shifts similarities (clamped to float32's epsilon)."""
    body = search(
        cluster, SHIFTED, **semantic([1, 0, 0], showRankingScore=True, showRankingScoreDetails=True)
    )
    assert ids(body) == [1, 2, 7, 3, 4, 6, 5]
    assert scores(body) == pytest.approx(
        [1.0, 1.0, 0.8071068525314331, 0.10000002384185791, 0.10000002384185791, 1.1920928955078125e-07, 0.0]
    )
    assert body["hits"][3]["_rankingScoreDetails"] == {
        "vectorSort": {"order": 0, "similarity": pytest.approx(0.10000002384185791)},
        "n:asc": {"order": 1, "value": 3.0},
    }
    body = search(cluster, SHIFTED, **semantic([1, 0, 0], sort=["n:desc"], showRankingScoreDetails=True))
    assert ids(body) == [7, 6, 5, 4, 3, 2, 1]
    assert list(body["hits"][0]["_rankingScoreDetails"]) == ["n:desc", "vectorSort"]
    body = search(cluster, SHIFTED, **semantic([0, 1, 0], distinct="color"))
    assert ids(body) == [3, 7, 2, 1]
    assert body["estimatedTotalHits"] == 4


def test_similarities_of_a_document_without_vectors_are_null(cluster: RunningCluster) -> None:
    body = search(cluster, INDEX, **semantic([0, 1, 0], showRankingScore=True, filter="n IN [2, 5]"))
    assert ids(body) == [2, 5]
    assert scores(body) == pytest.approx([GREEN_TO_Y, 0.0])


def test_errors(cluster: RunningCluster) -> None:
    path = f"/indexes/{INDEX}/search"
    assert_error(
        post(cluster, path, semantic([1, 0])),
        "invalid_vector_dimensions",
        DIMENSIONS,
    )
    assert_error(
        post(cluster, path, {"vector": [1, 0, 0], "hybrid": {"embedder": "nope"}}),
        "invalid_search_embedder",
        "Cannot find embedder with name `nope`.",
    )
    assert_error(
        post(cluster, path, {"q": "apple", "hybrid": {"embedder": EMBEDDER, "semanticRatio": 1.0}}),
        "vector_embedding_error",
        "Error while generating embeddings: user error: attempt to embed the following text in a"
        " configuration where embeddings must be user provided:\n  - `apple`",
    )
    assert_error(
        post(cluster, path, {"vector": [1, 0, 0]}),
        "missing_search_hybrid",
        "Invalid request: missing `hybrid` parameter when `vector` or `media` are present.",
    )
    response = httpx.get(f"{cluster.url}{path}", params={"vector": "0,1", "hybridEmbedder": EMBEDDER})
    assert_error(response, "invalid_vector_dimensions", DIMENSIONS)
    response = post(cluster, "/indexes/missing-index/search", semantic([1, 0, 0], q="x", ratio=0.5))
    assert (response.status_code, response.json()["code"]) == (404, "index_not_found")


def test_get_route(cluster: RunningCluster) -> None:
    params = {"vector": "1,0,0", "hybridEmbedder": EMBEDDER, "hybridSemanticRatio": "1", "limit": "2"}
    body = httpx.get(f"{cluster.url}/indexes/{INDEX}/search", params=params).json()
    assert ids(body) == [1, 2]
    assert body["semanticHitCount"] == 2


def test_get_parameter_errors(cluster: RunningCluster) -> None:
    """As the reference answers: a vector item that is no number, empty items skipped, a ratio that
    is no number told it is out of range."""
    url = f"{cluster.url}/indexes/{INDEX}/search"
    response = httpx.get(url, params={"vector": "1,x,0", "hybridEmbedder": EMBEDDER})
    assert_error(
        response, "invalid_search_vector", "Invalid value in parameter `vector`: invalid float literal"
    )
    response = httpx.get(url, params={"vector": "1,,0", "hybridEmbedder": EMBEDDER})
    assert_error(response, "invalid_vector_dimensions", DIMENSIONS)
    response = httpx.get(url, params={"q": "a", "hybridEmbedder": EMBEDDER, "hybridSemanticRatio": "x"})
    assert_error(
        response,
        "invalid_search_semantic_ratio",
        "Invalid value in parameter `hybridSemanticRatio`: the value of `semanticRatio` is invalid,"
        " expected a float between `0.0` and `1.0`.",
    )
