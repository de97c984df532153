"""Hybrid search (search.md §7.6): the keyword and vector legs fused, on 1 and 3 shards alike.

The fixed expectations are the reference engine's answers on the same documents
(``vector_support.py``); a seeded random index checks that 1 and 3 shards give the same hits in the
same order, whatever the ratio, filter, sort, page or threshold.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.search_support import (
    ids,
    make_index,
    one_and_three_shards,
    search,
)
from tests.integration.vector_support import (
    APPLE,
    APPLE_LATER,
    DOCS,
    EMBEDDER,
    SETTINGS,
    counts,
    post,
    scores,
    semantic,
    shard_count_cluster,  # noqa: F401 (the `cluster` fixture)
)
from tests.support.cluster import RunningCluster

INDEX = "hybrid"
RANDOM = "random"
WORDS = ["apple", "banana", "cherry", "red", "green", "blue", "sky", "car", "fast", "slow", "old", "new"]


def _random_documents(count: int = 240, seed: int = 21) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    docs = []
    for number in range(count):
        vector = [round(rng.uniform(-1, 1), 2) for _ in range(4)]
        docs.append(
            {
                "id": number,
                "title": " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5))),
                "group": rng.randint(0, 5),
                "n": rng.randint(0, 30),
                # Some documents share a vector: equal similarities tie by insertion order.
                "_vectors": {EMBEDDER: None if number % 11 == 0 else vector if number % 7 else [1, 0, 0, 0]},
            }
        )
    return docs


RANDOM_SETTINGS: dict[str, Any] = {
    "embedders": {EMBEDDER: {"source": "userProvided", "dimensions": 4}},
    "filterableAttributes": ["group", "n"],
    "sortableAttributes": ["n"],
}


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with one_and_three_shards(INDEX, DOCS, SETTINGS) as running:
        for cluster in running:
            make_index(cluster, RANDOM, _random_documents(), RANDOM_SETTINGS)
        yield running


def hybrid(vector: list[float] | None = None, ratio: float = 0.5, **params: Any) -> dict[str, Any]:
    query = semantic([0, 1, 0] if vector is None else vector, ratio, q="apple", **params)
    return query


def test_fusion_order_scores_and_counts(cluster: RunningCluster) -> None:
    body = search(cluster, INDEX, **hybrid(showRankingScore=True))
    assert ids(body) == [3, 7, 1, 2, 5, 4, 6]
    # Each hit shows its own score: similarity for the semantic ones, keyword score for the others.
    assert scores(body) == pytest.approx([1.0, 1.0, APPLE, APPLE, APPLE_LATER, 0.5, 0.5])
    assert counts(body) == {
        "query": "apple",
        "limit": 20,
        "offset": 0,
        "estimatedTotalHits": 7,
        "semanticHitCount": 4,
    }


def test_keyword_hits_good_enough_skip_the_vector_leg(cluster: RunningCluster) -> None:
    for ratio in (0.5, 0.1):
        body = search(cluster, INDEX, **hybrid(ratio=ratio, limit=1, retrieveVectors=True))
        assert ids(body) == [1]
        assert (body["estimatedTotalHits"], body["semanticHitCount"]) == (4, 0)
        assert "queryVector" not in body
    body = search(cluster, INDEX, **hybrid(hitsPerPage=2))
    assert ids(body) == [1, 2]
    assert (body["totalHits"], body["semanticHitCount"]) == (4, 0)


def test_semantic_hit_count_is_the_pages(cluster: RunningCluster) -> None:
    body = search(cluster, INDEX, **hybrid(limit=2, offset=2, retrieveVectors=True))
    assert ids(body) == [1, 2]
    assert (body["estimatedTotalHits"], body["semanticHitCount"]) == (7, 0)
    assert body["queryVector"] == [0.0, 1.0, 0.0]


def test_sort_values_compare_between_legs(cluster: RunningCluster) -> None:
    """Equal weighted scores, then the sort value; a keyword hit with groups left passes its own
    semantic twin."""
    body = search(cluster, INDEX, **hybrid(sort=["n:desc"], showRankingScoreDetails=True))
    assert ids(body) == [7, 5, 3, 2, 1, 6, 4]
    assert body["semanticHitCount"] == 3
    assert "words" in body["hits"][0]["_rankingScoreDetails"]
    assert list(body["hits"][2]["_rankingScoreDetails"]) == ["vectorSort", "n:desc"]


def test_facets_follow_the_legs_used(cluster: RunningCluster) -> None:
    body = search(cluster, INDEX, **hybrid(facets=["color"]))
    assert body["facetDistribution"] == {"color": {"blue": 1, "green": 1, "red": 3, "x": 2}}
    body = search(cluster, INDEX, **hybrid(facets=["color"], limit=1))
    assert body["facetDistribution"] == {"color": {"green": 1, "red": 2, "x": 1}}


def test_threshold_filter_and_distinct(cluster: RunningCluster) -> None:
    body = search(cluster, INDEX, **hybrid(rankingScoreThreshold=0.7))
    assert ids(body) == [3, 7, 1, 2, 5]
    assert (body["estimatedTotalHits"], body["semanticHitCount"]) == (5, 2)
    body = search(cluster, INDEX, **hybrid(rankingScoreThreshold=0.7, limit=2))
    assert (ids(body), body["estimatedTotalHits"]) == ([1, 2], 4)
    body = search(cluster, INDEX, **hybrid(filter="color = red"))
    assert ids(body) == [1, 5, 4]
    assert (body["estimatedTotalHits"], body["semanticHitCount"]) == (3, 1)
    body = search(cluster, INDEX, **hybrid(distinct="color"))
    assert ids(body) == [3, 7, 1, 2]
    assert (body["estimatedTotalHits"], body["semanticHitCount"]) == (4, 2)


def test_semantic_hits_are_highlighted_with_the_query(cluster: RunningCluster) -> None:
    body = search(
        cluster, INDEX, **hybrid(attributesToHighlight=["title"], showMatchesPosition=True, limit=3)
    )
    formatted = [hit["_formatted"]["title"] for hit in body["hits"]]
    assert formatted == ["blue sky", "two vectors <em>apple</em>", "red <em>apple</em>"]
    assert body["hits"][1]["_matchesPosition"] == {"title": [{"start": 12, "length": 5}]}


def test_embedding_failure_falls_back_to_keywords(cluster: RunningCluster) -> None:
    """A ``userProvided`` embedder cannot embed the text: the keyword answer, ``semanticHitCount: 0``."""
    body = search(cluster, INDEX, q="apple", hybrid={"embedder": EMBEDDER}, showRankingScore=True)
    assert ids(body) == [1, 2, 5, 7]
    assert (body["estimatedTotalHits"], body["semanticHitCount"]) == (4, 0)
    body = search(cluster, INDEX, q="apple", hybrid={"embedder": EMBEDDER, "semanticRatio": 0.0})
    assert "semanticHitCount" not in body


def _pages(cluster: RunningCluster, query: dict[str, Any]) -> tuple[Any, ...]:
    body = search(cluster, RANDOM, **query, showRankingScore=True)
    return ids(body), scores(body), body.get("estimatedTotalHits"), body.get("semanticHitCount")


def test_one_and_three_shards_agree(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    rng = random.Random(7)
    queries = []
    for _ in range(40):
        query: dict[str, Any] = {
            "q": " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3))),
            "vector": [round(rng.uniform(-1, 1), 2) for _ in range(4)],
            "hybrid": {"embedder": EMBEDDER, "semanticRatio": rng.choice([0.2, 0.5, 0.8, 1.0])},
            "limit": rng.choice([5, 20, 50]),
            "offset": rng.choice([0, 0, 3]),
        }
        if rng.random() < 0.3:
            query["filter"] = f"group != {rng.randint(0, 5)}"
        if rng.random() < 0.3:
            query["sort"] = [rng.choice(["n:asc", "n:desc"])]
        if rng.random() < 0.2:
            query["rankingScoreThreshold"] = rng.choice([0.3, 0.6])
        queries.append(query)
    one, three = clusters
    for query in queries:
        ids_one, scores_one, *counts_one = _pages(one, query)
        ids_three, scores_three, *counts_three = _pages(three, query)
        assert (ids_one, counts_one) == (ids_three, counts_three), query
        # float32 products over a shard's rows or over all of them may differ in the last bit
        assert scores_one == pytest.approx(scores_three, abs=1e-6), query


def test_facet_search_counts_every_filtered_document(cluster: RunningCluster) -> None:
    """search.md §3.1: hybrid or semantic, every document the filter keeps counts (nothing is
    embedded: a userProvided embedder needs no vector here), the embedder and vector checked."""
    path = f"/indexes/{INDEX}/facet-search"

    def facet_hits(**body: Any) -> Any:
        response = post(cluster, path, {"facetName": "color", "q": "apple", **body})
        assert response.status_code == 200, response.text
        return {hit["value"]: hit["count"] for hit in response.json()["facetHits"]}

    everything = {"blue": 1, "green": 1, "red": 3, "x": 2}
    assert facet_hits() == {"green": 1, "red": 2, "x": 1}
    assert facet_hits(hybrid={"embedder": EMBEDDER}, vector=[0, 1, 0]) == everything
    assert facet_hits(hybrid={"embedder": EMBEDDER, "semanticRatio": 1.0}, vector=[0, 1, 0]) == everything
    assert facet_hits(hybrid={"embedder": EMBEDDER}) == everything
    assert facet_hits(hybrid={"embedder": EMBEDDER}, rankingScoreThreshold=0.7) == everything
    assert facet_hits(hybrid={"embedder": EMBEDDER}, filter="n > 2") == {"blue": 1, "red": 2, "x": 2}
    response = post(cluster, path, {"facetName": "color", "q": "apple", "hybrid": {"embedder": "zz"}})
    assert (response.status_code, response.json()["code"]) == (400, "invalid_search_embedder")
    response = post(
        cluster, path, {"facetName": "color", "q": "a", "hybrid": {"embedder": EMBEDDER}, "vector": [0, 1]}
    )
    assert response.json()["message"] == "Invalid vector dimensions: expected: `3`, found: `2`."
