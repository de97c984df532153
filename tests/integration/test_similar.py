"""``/indexes/{uid}/similar`` GET and POST (search.md §3.2), on 1 and 3 shards, and its auth.

Expectations are the reference engine's answers on the same documents (``vector_support.py``), but
one: a document with several embeddings is compared by its best one, as in search (the reference
compares only its first one in /similar).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import meilisearch
import pytest

from tests.integration.search_support import (
    assert_error,
    ids,
    one_and_three_shards,
)
from tests.integration.vector_support import (
    DOCS,
    EMBEDDER,
    GREEN,
    SETTINGS,
    TWO_VECTORS,
    shard_count_cluster,  # noqa: F401 (the `cluster` fixture)
)
from tests.support.auth import MASTER_KEY, bearer, create_key, secured_cluster
from tests.support.client import client_for
from tests.support.cluster import RunningCluster

INDEX = "similar"
PATH = f"/indexes/{INDEX}/similar"


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with one_and_three_shards(INDEX, DOCS, SETTINGS) as running:
        yield running


def similar(cluster: RunningCluster, **body: Any) -> dict[str, Any]:
    response = httpx.post(f"{cluster.url}{PATH}", json={"embedder": EMBEDDER, **body}, timeout=30)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def similar_get(cluster: RunningCluster, **params: str) -> httpx.Response:
    return httpx.get(f"{cluster.url}{PATH}", params=params, timeout=30)


def test_neighbours_of_a_document(cluster: RunningCluster) -> None:
    body = similar(cluster, id=1, showRankingScore=True, showRankingScoreDetails=True)
    assert ids(body) == [2, 7, 3, 4, 6]
    assert [hit["_rankingScore"] for hit in body["hits"]] == pytest.approx(
        [GREEN, TWO_VECTORS, 0.5, 0.5, 0.0]
    )
    assert body["hits"][0]["_rankingScoreDetails"] == {"vectorSort": {"order": 0, "similarity": GREEN}}
    assert list(body) == ["hits", "id", "processingTimeMs", "offset", "limit", "estimatedTotalHits"]
    # The target is left out; the document without embedding is counted, never a hit.
    assert (body["id"], body["offset"], body["limit"], body["estimatedTotalHits"]) == ("1", 0, 20, 6)


def test_page_threshold_and_filter(cluster: RunningCluster) -> None:
    body = similar(cluster, id=1, offset=1, limit=2)
    assert (ids(body), body["estimatedTotalHits"]) == ([7, 3], 6)
    body = similar(cluster, id=1, rankingScoreThreshold=0.6)
    assert (ids(body), body["estimatedTotalHits"]) == ([2, 7], 2)
    body = similar(cluster, id=1, rankingScoreThreshold=0.6, limit=1)
    assert (ids(body), body["estimatedTotalHits"]) == ([2], 2)
    body = similar(cluster, id=1, filter="color = red")
    assert (ids(body), body["estimatedTotalHits"]) == ([4], 2)
    body = similar(cluster, id=2, filter=["color = red"])
    assert (ids(body), body["estimatedTotalHits"]) == ([1, 4], 3)
    # The filter need not keep the target itself.
    assert ids(similar(cluster, id=1, filter="color = blue")) == [3]


def test_a_target_without_embedding_has_no_neighbour(cluster: RunningCluster) -> None:
    body = similar(cluster, id=5)
    assert (body["hits"], body["estimatedTotalHits"]) == ([], 6)


def test_retrieved_attributes_and_vectors(cluster: RunningCluster) -> None:
    body = similar(cluster, id="1", limit=1, retrieveVectors=True, attributesToRetrieve=["title"])
    (hit,) = body["hits"]
    assert list(hit) == ["title", "_vectors"]
    assert hit["title"] == "green apple"
    assert hit["_vectors"][EMBEDDER]["regenerate"] is False
    assert hit["_vectors"][EMBEDDER]["embeddings"] == [pytest.approx([0.9, 0.1, 0.0])]
    body = similar(cluster, id=1, limit=1, showPerformanceDetails=True)
    assert "performanceDetails" in body


def test_get_route_and_official_client(cluster: RunningCluster) -> None:
    response = similar_get(cluster, id="1", embedder=EMBEDDER, limit="2", showRankingScore="true")
    assert [(hit["id"], hit["_rankingScore"]) for hit in response.json()["hits"]] == [
        (2, pytest.approx(GREEN)),
        (7, pytest.approx(TWO_VECTORS)),
    ]
    response = similar_get(
        cluster, id="1", embedder=EMBEDDER, filter='["color = red"]', attributesToRetrieve="id"
    )
    assert response.json()["hits"] == [{"id": 4}]
    assert response.json()["estimatedTotalHits"] == 2
    result = (
        client_for(cluster).index(INDEX).get_similar_documents({"id": 1, "embedder": EMBEDDER, "limit": 3})
    )
    assert [hit["id"] for hit in result["hits"]] == [2, 7, 3]


_INVALID_ID = (
    "Invalid value at `.id`: Document identifier `{}` is invalid. A document identifier can be of type"
    " integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and"
    " underscores (_), and can not be more than 511 bytes."
)
_POST_FIELDS = (
    "`id`, `offset`, `limit`, `filter`, `embedder`, `attributesToRetrieve`, `retrieveVectors`,"
    " `showRankingScore`, `showRankingScoreDetails`, `showPerformanceDetails`, `rankingScoreThreshold`"
)


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        ({"id": 99, "embedder": EMBEDDER}, "not_found_similar_id", "Document `99` not found."),
        ({"id": "a b", "embedder": EMBEDDER}, "invalid_similar_id", _INVALID_ID.format('"a b"')),
        ({"id": 1.5, "embedder": EMBEDDER}, "invalid_similar_id", _INVALID_ID.format("1.5")),
        ({"id": True, "embedder": EMBEDDER}, "invalid_similar_id", _INVALID_ID.format("true")),
        ({"id": None, "embedder": EMBEDDER}, "invalid_similar_id", _INVALID_ID.format("null")),
        ({"id": 1, "embedder": "zz"}, "invalid_similar_embedder", "Cannot find embedder with name `zz`."),
        ({"id": 99, "embedder": "zz"}, "invalid_similar_embedder", "Cannot find embedder with name `zz`."),
        ({"embedder": EMBEDDER}, "bad_request", "Missing field `id`"),
        ({"id": 1}, "bad_request", "Missing field `embedder`"),
        (
            {"id": 1, "embedder": EMBEDDER, "q": "x"},
            "bad_request",
            f"Unknown field `q`: expected one of {_POST_FIELDS}",
        ),
        (
            {"id": 1, "embedder": 3},
            "invalid_similar_embedder",
            "Invalid value type at `.embedder`: expected a string, but found a positive integer: `3`",
        ),
        (
            {"id": 1, "embedder": EMBEDDER, "limit": -1},
            "invalid_similar_limit",
            "Invalid value type at `.limit`: expected a positive integer, but found a negative integer: `-1`",
        ),
        (
            {"id": 1, "embedder": EMBEDDER, "offset": None},
            "invalid_similar_offset",
            "Invalid value type at `.offset`: expected a positive integer, but found null",
        ),
        (
            {"id": 1, "embedder": EMBEDDER, "attributesToRetrieve": "x"},
            "invalid_similar_attributes_to_retrieve",
            'Invalid value type at `.attributesToRetrieve`: expected an array, but found a string: `"x"`',
        ),
        (
            {"id": 1, "embedder": EMBEDDER, "retrieveVectors": "x"},
            "invalid_similar_retrieve_vectors",
            'Invalid value type at `.retrieveVectors`: expected a boolean, but found a string: `"x"`',
        ),
        (
            {"id": 1, "embedder": EMBEDDER, "showRankingScoreDetails": "x"},
            "invalid_similar_show_ranking_score_details",
            'Invalid value type at `.showRankingScoreDetails`: expected a boolean, but found a string: `"x"`',
        ),
        (
            {"id": 1, "embedder": EMBEDDER, "rankingScoreThreshold": 2},
            "invalid_similar_ranking_score_threshold",
            "Invalid value at `.rankingScoreThreshold`: the value of `rankingScoreThreshold` is invalid,"
            " expected a float between `0.0` and `1.0`.",
        ),
        (
            {"id": 1, "embedder": EMBEDDER, "filter": "color ="},
            "invalid_similar_filter",
            "Was expecting a value but instead got nothing.\n8:8 color =",
        ),
        (
            {"id": 1, "embedder": EMBEDDER, "filter": "title = x"},
            "invalid_similar_filter",
            "Attribute `title` is not filterable. Available filterable attribute patterns are: `color`,"
            " `n`.\n1:6 title = x",
        ),
        (
            {"id": 99, "embedder": EMBEDDER, "filter": "title = x"},
            "not_found_similar_id",
            "Document `99` not found.",
        ),
    ],
)
def test_post_errors(
    clusters: tuple[RunningCluster, ...], body: dict[str, Any], code: str, message: str
) -> None:
    for cluster in clusters:
        assert_error(httpx.post(f"{cluster.url}{PATH}", json=body), code, message)


@pytest.mark.parametrize(
    ("params", "code", "message"),
    [
        ({"id": "1"}, "bad_request", "Missing parameter `embedder`"),
        ({"embedder": EMBEDDER}, "bad_request", "Missing parameter `id`"),
        (
            {"id": "1", "embedder": EMBEDDER, "limit": "x"},
            "invalid_similar_limit",
            "Invalid value in parameter `limit`: could not parse `x` as a positive integer",
        ),
        (
            {"id": "1", "embedder": EMBEDDER, "rankingScoreThreshold": "x"},
            "invalid_similar_ranking_score_threshold",
            "Invalid value in parameter `rankingScoreThreshold`: the value of `rankingScoreThreshold` is"
            " invalid, expected a float between `0.0` and `1.0`.",
        ),
        (
            {"id": "1", "embedder": EMBEDDER, "retrieveVectors": "x"},
            "invalid_similar_retrieve_vectors",
            "Invalid value in parameter `retrieveVectors`: could not parse `x` as a boolean, expected either"
            " `true` or `false`",
        ),
        (
            {"id": "1", "embedder": EMBEDDER, "foo": "x"},
            "bad_request",
            "Unknown parameter `foo`: expected one of `id`, `embedder`, `offset`, `limit`,"
            " `attributesToRetrieve`, `retrieveVectors`, `filter`, `showRankingScore`,"
            " `showRankingScoreDetails`, `showPerformanceDetails`, `rankingScoreThreshold`",
        ),
        ({"id": "a b", "embedder": EMBEDDER}, "invalid_similar_id", _INVALID_ID.format('"a b"')),
    ],
)
def test_get_errors(
    clusters: tuple[RunningCluster, ...], params: dict[str, str], code: str, message: str
) -> None:
    assert_error(similar_get(clusters[1], **params), code, message)


def test_missing_index(cluster: RunningCluster) -> None:
    response = httpx.post(f"{cluster.url}/indexes/nowhere/similar", json={"id": 1, "embedder": EMBEDDER})
    assert_error(response, "index_not_found", "Index `nowhere` not found.", status=404)


@pytest.fixture(scope="module")
def secured() -> Iterator[RunningCluster]:
    with secured_cluster() as cluster:
        admin = meilisearch.Client(cluster.url, MASTER_KEY)
        admin.wait_for_task(admin.index(INDEX).update_settings(SETTINGS).task_uid)
        make_index_task = admin.index(INDEX).add_documents(DOCS, primary_key="id")
        assert admin.wait_for_task(make_index_task.task_uid).status == "succeeded"
        yield cluster


def test_api_key_action_search(secured: RunningCluster) -> None:
    allowed = create_key(secured, actions=["search"], indexes=[INDEX])["key"]
    response = httpx.post(
        f"{secured.url}{PATH}", json={"id": 1, "embedder": EMBEDDER}, headers=bearer(allowed)
    )
    assert ids(response.json()) == [2, 7, 3, 4, 6]
    refused = create_key(secured, actions=["documents.get"], indexes=[INDEX])["key"]
    for response in (
        httpx.post(f"{secured.url}{PATH}", json={"id": 1, "embedder": EMBEDDER}, headers=bearer(refused)),
        httpx.get(f"{secured.url}{PATH}", params={"id": "1", "embedder": EMBEDDER}, headers=bearer(refused)),
        httpx.post(f"{secured.url}{PATH}", json={"id": 1, "embedder": EMBEDDER}),
    ):
        assert response.status_code in (401, 403), response.text
        assert response.json()["type"] == "auth"


def test_tenant_token_filter(secured: RunningCluster) -> None:
    parent = create_key(secured, actions=["search"], indexes=[INDEX])
    admin = meilisearch.Client(secured.url, MASTER_KEY)
    token = admin.generate_tenant_token(
        parent["uid"], {INDEX: {"filter": "color = red"}}, api_key=parent["key"]
    )
    response = httpx.post(f"{secured.url}{PATH}", json={"id": 1, "embedder": EMBEDDER}, headers=bearer(token))
    assert (ids(response.json()), response.json()["estimatedTotalHits"]) == ([4], 2)
    # A target the token's filter leaves out is not found, whatever the request's own filter.
    response = httpx.post(f"{secured.url}{PATH}", json={"id": 2, "embedder": EMBEDDER}, headers=bearer(token))
    assert_error(response, "not_found_similar_id", "Document `2` not found.")
