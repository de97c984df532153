"""Filters on search, multi-search and the document routes (search.md §4.3, core.md §3.3).

A small crafted index, the same on a 1-shard cluster and on a 3-shard cluster started with
``--experimental-contains-filter``; every expected id list is written from the contract's semantics.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.search_support import assert_error, make_index, search, search_get, search_raw
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

DOCS: list[dict[str, Any]] = [
    {
        "id": 1,
        "title": "Alpha",
        "genres": ["Action", "Drama"],
        "year": 2004,
        "rating": 7.5,
        "director": {"name": "Ann", "age": 40},
        "available": True,
        "tags": [],
    },
    {
        "id": 2,
        "title": "Beta",
        "genres": ["comedy"],
        "year": "2004",
        "rating": 5,
        "director": {"name": "Bob"},
        "available": False,
        "tags": ["x"],
    },
    {"id": 3, "title": "Gamma", "genres": "Drama", "year": 1999, "rating": None, "available": True},
    {"id": 4, "title": "Delta", "genres": [], "year": 2010, "rating": 9.1, "director": None, "tags": ""},
    {
        "id": 5,
        "title": "Epsilon café",
        "genres": ["Café Noir"],
        "year": -5,
        "director": {"name": "ann", "age": 61},
    },
    {"id": 6, "title": "Zeta"},
]
ALL = [1, 2, 3, 4, 5, 6]
SETTINGS = {
    "filterableAttributes": [
        "genres",
        "year",
        "rating",
        "director",
        "available",
        "tags",
        "missing",
        {"attributePatterns": ["title"], "features": {"filter": {"equality": True, "comparison": True}}},
        {"attributePatterns": ["id"], "features": {"filter": {"equality": True, "comparison": False}}},
    ]
}

CASES: list[tuple[Any, list[int]]] = [
    ("genres = action", [1]),
    ("genres = DRAMA", [1, 3]),
    ("genres != drama", [2, 4, 5, 6]),
    ("year = 2004", [1, 2]),
    ("year > 2000", [1, 2, 4]),
    ("year 1999 TO 2004", [1, 2, 3]),
    ("year 2004 TO 1999", []),
    ("year < 0", [5]),
    ("rating >= 7.5", [1, 4]),
    ("rating < 6", [2]),
    ("rating <= 5", [2]),
    ("title > delta", [3, 5, 6]),
    ("director.name = ANN", [1, 5]),
    ("director.age > 50", [5]),
    ("director EXISTS", [1, 2, 4, 5]),
    ("director NOT EXISTS", [3, 6]),
    ("director IS NULL", [4]),
    ("rating IS NULL", [3]),
    ("rating IS NOT NULL", [1, 2, 4, 5, 6]),
    ("tags IS EMPTY", [1, 4]),
    ("tags IS NOT EMPTY", [2, 3, 5, 6]),
    ("genres IS EMPTY", [4]),
    ("available = true", [1, 3]),
    ("available = false", [2]),
    ("genres IN [comedy, 'café noir']", [2, 5]),
    ("genres NOT IN [drama]", [2, 4, 5, 6]),
    ("NOT genres = drama", [2, 4, 5, 6]),
    ("genres = drama AND year < 2000", [3]),
    ("genres = comedy OR rating > 9", [2, 4]),
    ("(genres = drama OR genres = comedy) AND NOT available = true", [2]),
    ("genres = drama OR genres = comedy AND year = 1999", [1, 3]),
    ("title STARTS WITH ep", [5]),
    ("title NOT STARTS WITH ep", [1, 2, 3, 4, 6]),
    ("missing = 1", []),
    ("missing != 1", ALL),
    ("missing NOT EXISTS", ALL),
    ([["genres = comedy", "genres = action"], "year = 2004"], [1, 2]),
    (["genres = drama", "NOT year = 1999"], [1]),
    ([], ALL),
    ("", ALL),
]


@pytest.fixture(scope="module", params=[1, 3], ids=["1-shard", "3-shards"])
def cluster(request: pytest.FixtureRequest) -> Iterator[RunningCluster]:
    options = ("--experimental-contains-filter",) if request.param == 3 else ()
    with RunningCluster(*options, shards=request.param) as running:
        make_index(running, "movies", DOCS, SETTINGS)
        yield running


def matched(body: dict[str, Any]) -> list[int]:
    return sorted(hit["id"] for hit in body["hits"])


@pytest.mark.parametrize(("expression", "expected"), CASES)
def test_search_filter(cluster: RunningCluster, expression: Any, expected: list[int]) -> None:
    body = search(cluster, "movies", filter=expression, limit=50)
    assert matched(body) == expected
    assert body["estimatedTotalHits"] == len(expected)


def test_filter_with_the_official_client(cluster: RunningCluster) -> None:
    result = client_for(cluster).index("movies").search("", {"filter": "director.name = ann", "limit": 1})
    assert len(result["hits"]) == 1
    assert result["estimatedTotalHits"] == 2


def test_get_search_filter_string_and_json_array(cluster: RunningCluster) -> None:
    response = search_get(cluster, "movies", {"filter": "year = 2004"})
    assert response.status_code == 200, response.text
    assert matched(response.json()) == [1, 2]
    response = search_get(
        cluster, "movies", {"filter": '[["genres = comedy", "rating > 9"], "year >= 2004"]'}
    )
    assert response.status_code == 200, response.text
    assert matched(response.json()) == [2, 4]


def test_keyword_search_is_restricted(cluster: RunningCluster) -> None:
    body = search(cluster, "movies", q="drama", filter="year < 2000")
    assert matched(body) == [3]
    assert body["estimatedTotalHits"] == 1


def test_counts_are_exact_in_both_pagination_modes(cluster: RunningCluster) -> None:
    body = search(cluster, "movies", filter="genres != comedy", limit=2)
    assert len(body["hits"]) == 2
    assert body["estimatedTotalHits"] == 5
    body = search(cluster, "movies", filter="genres != comedy", hitsPerPage=2, page=2)
    assert body["totalHits"] == 5
    assert body["totalPages"] == 3
    assert len(body["hits"]) == 2


def test_multi_search_filters_each_query(cluster: RunningCluster) -> None:
    queries = [
        {"indexUid": "movies", "filter": "available = true"},
        {"indexUid": "movies", "q": "alpha", "filter": "year = 1999"},
    ]
    response = httpx.post(f"{cluster.url}/multi-search", json={"queries": queries}, timeout=30)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [matched(result) for result in results] == [[1, 3], []]


def test_federated_multi_search_filters(cluster: RunningCluster) -> None:
    body = {
        "federation": {},
        "queries": [
            {"indexUid": "movies", "filter": "year = 1999"},
            {"indexUid": "movies", "filter": "rating > 9"},
        ],
    }
    response = httpx.post(f"{cluster.url}/multi-search", json=body, timeout=30)
    assert response.status_code == 200, response.text
    assert matched(response.json()) == [3, 4]


def test_contains(cluster: RunningCluster) -> None:
    response = search_raw(cluster, "movies", filter="title CONTAINS 'CAFÉ'")
    if cluster.args[-1] != "--experimental-contains-filter":
        assert_error(
            response,
            "feature_not_enabled",
            prefix="Using `CONTAINS` in a filter requires enabling the `contains filter` experimental",
        )
        return
    assert response.status_code == 200, response.text
    assert matched(response.json()) == [5]
    assert matched(search(cluster, "movies", filter="title NOT CONTAINS ta")) == [1, 3, 5]


def test_syntax_error(cluster: RunningCluster) -> None:
    response = search_raw(cluster, "movies", filter="title & Glass")
    assert_error(response, "invalid_search_filter", prefix="Was expecting an operation")


def test_attribute_not_filterable(cluster: RunningCluster) -> None:
    response = search_raw(cluster, "movies", filter='"many" = "Glass"')
    assert_error(
        response, "invalid_search_filter", prefix="Index `movies`: Attribute `many` is not filterable."
    )


def test_operator_not_allowed(cluster: RunningCluster) -> None:
    response = search_raw(cluster, "movies", filter="id > 3")
    assert_error(
        response,
        "invalid_search_filter",
        prefix="Index `movies`: Filter operator `>` is not allowed for the attribute `id`.",
    )


def test_geo_filter_is_not_supported_yet(cluster: RunningCluster) -> None:
    response = search_raw(cluster, "movies", filter="_geoRadius(45.0, 3.0, 1000)")
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "invalid_search_filter"


# --- documents --------------------------------------------------------------------------------------


def documents(cluster: RunningCluster, uid: str, **params: Any) -> httpx.Response:
    return httpx.get(f"{cluster.url}/indexes/{uid}/documents", params=params, timeout=30)


def fetch(cluster: RunningCluster, uid: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{cluster.url}/indexes/{uid}/documents/fetch", json=body, timeout=30)


def test_get_documents_with_filter(cluster: RunningCluster) -> None:
    response = documents(cluster, "movies", filter="genres = drama OR year < 0", fields="id")
    assert response.status_code == 200, response.text
    assert response.json() == {
        "results": [{"id": 1}, {"id": 3}, {"id": 5}],
        "offset": 0,
        "limit": 20,
        "total": 3,
    }
    response = documents(cluster, "movies", filter='["available = true", "year > 2000"]', fields="id")
    assert response.json()["results"] == [{"id": 1}]


def test_fetch_documents_with_filter_ids_and_paging(cluster: RunningCluster) -> None:
    response = fetch(
        cluster, "movies", {"filter": "rating EXISTS", "offset": 1, "limit": 2, "fields": ["id"]}
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"results": [{"id": 2}, {"id": 3}], "offset": 1, "limit": 2, "total": 4}
    response = fetch(cluster, "movies", {"filter": "rating > 6", "ids": [1, 2, 4], "fields": ["id"]})
    assert response.json()["results"] == [{"id": 1}, {"id": 4}]
    assert response.json()["total"] == 2


def test_document_filter_errors(cluster: RunningCluster) -> None:
    assert_error(fetch(cluster, "movies", {"filter": "title &"}), "invalid_document_filter")
    # Unlike search and task errors, document reads name no index (the reference's message).
    not_filterable = (
        "Attribute `many` is not filterable. Available filterable attribute patterns are: `available`,"
        " `director`, `genres`, `id`, `missing`, `rating`, `tags`, `title`, `year`.\n1:5 many = 1"
    )
    for response in (
        documents(cluster, "movies", filter="many = 1"),
        fetch(cluster, "movies", {"filter": "many = 1"}),
    ):
        assert_error(response, "invalid_document_filter", not_filterable)
    # A forbidden operator is `invalid_search_filter` whatever the route (search.md §4.4).
    assert_error(
        fetch(cluster, "movies", {"filter": "id > 1"}),
        "invalid_search_filter",
        prefix="Filter operator `>` is not allowed for the attribute `id`.\n",
    )


def test_facet_search_filter_errors_name_no_index(cluster: RunningCluster) -> None:
    url = f"{cluster.url}/indexes/movies/facet-search"
    response = httpx.post(url, json={"facetName": "genres", "filter": "many = 1"})
    assert_error(response, "invalid_search_filter", prefix="Attribute `many` is not filterable.")
    response = httpx.post(url, json={"facetName": "genres", "filter": "id > 1"})
    assert_error(response, "invalid_search_filter", prefix="Filter operator `>` is not allowed")
    search = httpx.post(f"{cluster.url}/indexes/movies/search", json={"filter": "many = 1"})
    prefix = "Index `movies`: Attribute `many` is not filterable."
    assert_error(search, "invalid_search_filter", prefix=prefix)


def test_delete_by_filter(cluster: RunningCluster) -> None:
    uid = f"deletion-{len(cluster.args)}"
    make_index(cluster, uid, DOCS, SETTINGS)
    response = httpx.post(f"{cluster.url}/indexes/{uid}/documents/delete", json={"filter": "genres = drama"})
    assert response.status_code == 202, response.text
    task = wait_task(cluster, response.json()["taskUid"])
    assert task["status"] == "succeeded", task
    assert task["type"] == "documentDeletion"
    assert task["details"] == {"providedIds": 0, "deletedDocuments": 2, "originalFilter": '"genres = drama"'}
    ids = [doc["id"] for doc in documents(cluster, uid, limit=50).json()["results"]]
    assert ids == [2, 4, 5, 6]
    assert search(cluster, uid, filter="genres = drama")["hits"] == []
    response = httpx.post(
        f"{cluster.url}/indexes/{uid}/documents/delete", json={"filter": [["year = 2004", "year < 0"]]}
    )
    task = wait_task(cluster, response.json()["taskUid"])
    assert task["details"] == {
        "providedIds": 0,
        "deletedDocuments": 2,
        "originalFilter": '[["year = 2004","year < 0"]]',
    }
    assert [doc["id"] for doc in documents(cluster, uid).json()["results"]] == [4, 6]


def test_delete_by_filter_errors(cluster: RunningCluster) -> None:
    url = f"{cluster.url}/indexes/movies/documents/delete"
    assert_error(httpx.post(url, json={}), "missing_document_filter")
    assert_error(
        httpx.post(url, json={"filter": ""}),
        "invalid_document_filter",
        "Sending an empty filter is forbidden.",
    )
    assert_error(httpx.post(url, json={"filter": "year >"}), "invalid_document_filter")
    response = httpx.post(url, json={"filter": "many = 1"})
    assert response.status_code == 202, response.text
    task = wait_task(cluster, response.json()["taskUid"])
    assert task["status"] == "failed", task
    assert task["error"]["code"] == "invalid_document_filter"
    assert task["error"]["message"].startswith("Index `movies`: Attribute `many` is not filterable.")
    response = httpx.post(url, json={"filter": "id > 1"})
    task = wait_task(cluster, response.json()["taskUid"])
    assert task["error"]["code"] == "invalid_search_filter"
    assert task["error"]["message"].startswith("Index `movies`: Filter operator `>` is not allowed")
    assert task["details"]["deletedDocuments"] == 0
    response = httpx.post(f"{cluster.url}/indexes/nope/documents/delete", json={"filter": "a = 1"})
    assert wait_task(cluster, response.json()["taskUid"])["error"]["code"] == "index_not_found"


def test_filterable_change_reindexes(cluster: RunningCluster) -> None:
    uid = f"late-{len(cluster.args)}"
    make_index(cluster, uid, DOCS)
    assert_error(search_raw(cluster, uid, filter="year = 2004"), "invalid_search_filter")
    task = wait_task(cluster, client_for(cluster).index(uid).update_filterable_attributes(["year"]).task_uid)
    assert task["status"] == "succeeded", task
    assert matched(search(cluster, uid, filter="year = 2004")) == [1, 2]
    task = wait_task(
        cluster, client_for(cluster).index(uid).update_filterable_attributes(["rating"]).task_uid
    )
    assert matched(search(cluster, uid, filter="rating > 6")) == [1, 4]
    assert_error(search_raw(cluster, uid, filter="year = 2004"), "invalid_search_filter")
