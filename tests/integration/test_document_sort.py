"""``sort`` on GET /documents and POST /documents/fetch (core.md §3.3, search.md §5), on 1 and 3 shards.

Expected pages come from ``sort_reference`` (the contract's value order in plain Python) applied to the
documents the test wrote; both clusters must give exactly them, so the gateway's merge of the shards'
sorted pages is checked too.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.search_support import DOCS_LINK, make_index
from tests.integration.sort_reference import Criterion, haversine, point, sorted_ids
from tests.support.client import client_for
from tests.support.cluster import RunningCluster

BRANDS = ["Acme", "acme", "Zeta", "Éclair", "beta", "10", "9", " zeta "]


def _document(rng: random.Random, doc_id: int) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": doc_id, "title": rng.choice(["shirt", "hat", "shoe"])}
    doc["kind"] = rng.choice(["a", "b", "c"])
    kind = rng.random()
    if kind < 0.5:
        doc["price"] = rng.choice([rng.randint(-5, 40), round(rng.uniform(0, 40), 2)])
    elif kind < 0.65:
        doc["price"] = str(rng.randint(0, 99))
    elif kind < 0.85:
        doc["price"] = [rng.randint(0, 50), rng.randint(0, 50)]
    if rng.random() < 0.8:
        doc["brand"] = rng.choice(BRANDS)
    doc["rating"] = rng.randint(1, 5)
    doc["secret"] = rng.randint(0, 1000)
    if rng.random() < 0.6:
        doc["_geo"] = {"lat": 48.85 + rng.uniform(-2, 2), "lng": 2.35 + rng.uniform(-2, 2)}
    return doc


_RNG = random.Random(11)
DOCS = [_document(_RNG, doc_id) for doc_id in range(240)]
SETTINGS = {
    "filterableAttributes": ["kind", "rating"],
    "sortableAttributes": ["price", "brand", "rating", "_geo", "secret"],
    "displayedAttributes": ["id", "title", "kind", "price", "brand", "rating", "_geo"],
    "searchableAttributes": ["title"],
}


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with RunningCluster(shards=1) as one, RunningCluster(shards=3) as three:
        for running in (one, three):
            make_index(running, "items", DOCS, SETTINGS)
        yield one, three


def sort_entries(criteria: list[Criterion]) -> list[str]:
    return [f"{field}:{'asc' if ascending else 'desc'}" for field, ascending in criteria]


def fetch_ids(cluster: RunningCluster, **params: Any) -> tuple[list[int], int]:
    """Through the official client (POST /documents/fetch): the page's ids and ``total``."""
    page = client_for(cluster).index("items").get_documents(params)
    return [doc.id for doc in page.results], page.total


@pytest.mark.parametrize(
    "criteria",
    [
        [("price", True)],
        [("price", False)],
        [("brand", True), ("price", False)],
        [("rating", False), ("brand", False), ("price", True)],
    ],
)
@pytest.mark.parametrize(
    ("filter_", "offset", "limit"), [(None, 0, 300), ("kind = a", 7, 20), ("rating >= 3", 40, 35)]
)
def test_fetch_sorts_filters_and_pages(
    clusters: tuple[RunningCluster, RunningCluster],
    criteria: list[Criterion],
    filter_: str | None,
    offset: int,
    limit: int,
) -> None:
    selected = [doc for doc in DOCS if filter_ is None or _matches(doc, filter_)]
    expected = sorted_ids(selected, criteria)
    params: dict[str, Any] = {"sort": sort_entries(criteria), "offset": offset, "limit": limit}
    if filter_ is not None:
        params["filter"] = filter_
    for cluster in clusters:
        assert fetch_ids(cluster, **params) == (expected[offset : offset + limit], len(selected))


def _matches(doc: dict[str, Any], filter_: str) -> bool:
    if filter_ == "kind = a":
        return bool(doc["kind"] == "a")
    assert filter_ == "rating >= 3"
    return bool(doc["rating"] >= 3)


def test_get_form_keeps_geo_points_intact(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    center = (48.0, 2.0)
    located = sorted((haversine(center, p), doc["id"]) for doc in DOCS if (p := point(doc)) is not None)
    missing = sorted_ids([doc for doc in DOCS if point(doc) is None], [("rating", False)])
    expected = [doc_id for _, doc_id in located] + missing
    for cluster in clusters:
        response = httpx.get(
            f"{cluster.url}/indexes/items/documents",
            params={"sort": "_geoPoint(48.0, 2.0):asc,rating:desc", "limit": "500", "fields": "id"},
            timeout=30,
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert [doc["id"] for doc in body["results"]] == expected
        assert body["results"][0] == {"id": expected[0]}
        assert body["total"] == len(DOCS)


def test_ids_fields_and_stored_fields(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    """``ids`` narrows, ``fields`` projects; a document route shows stored fields whatever
    ``displayedAttributes`` says, and a sort needs no ``sort`` ranking rule there."""
    wanted = [doc for doc in DOCS if doc["id"] % 7 == 0]
    expected = sorted_ids(wanted, [("secret", False)])
    for cluster in clusters:
        response = httpx.post(
            f"{cluster.url}/indexes/items/documents/fetch",
            json={
                "ids": [str(doc["id"]) for doc in wanted] + ["999"],
                "sort": ["secret:desc"],
                "fields": ["id", "secret"],
                "offset": 2,
                "limit": 10,
            },
            timeout=30,
        )
        assert response.status_code == 200, response.text
        body = response.json()
        by_id = {doc["id"]: doc for doc in DOCS}
        assert body["results"] == [{"id": i, "secret": by_id[i]["secret"]} for i in expected[2:12]]
        assert (body["offset"], body["limit"], body["total"]) == (2, 10, len(wanted))
    one = clusters[0]
    make_index(one, "norule", DOCS[:30], {"sortableAttributes": ["rating"], "rankingRules": ["words"]})
    page = client_for(one).index("norule").get_documents({"sort": ["rating:asc"], "limit": 30})
    assert [doc.id for doc in page.results] == sorted_ids(DOCS[:30], [("rating", True)])


NOT_SORTABLE = (
    "Index `items`: Attribute `title` is not sortable. Available sortable attributes are:"
    " `_geo, brand, price, rating, <..hidden-attributes>`."
)
SYNTAX = (
    "Invalid syntax for the sort parameter: expected expression ending by `:asc` or `:desc`, found `price`."
)


@pytest.mark.parametrize(
    ("sort", "message"),
    [
        (["title:asc"], NOT_SORTABLE),
        (["price"], SYNTAX),
        (["price:up"], SYNTAX.replace("`price`", "`price:up`")),
        (
            ["_geo:asc"],
            "`_geo` is a reserved keyword and thus can't be used as a sort expression. Use the"
            " _geoPoint(latitude, longitude) built-in rule to sort on _geo field coordinates.",
        ),
        (
            ["_geoDistance:desc"],
            "`_geoDistance` is a reserved keyword and thus can't be used as a sort expression.",
        ),
        (
            ["_geoPoint(91, 0):asc"],
            "Bad latitude `91`. Latitude must be contained between -90 and 90 degrees.",
        ),
        (
            ["_geoPoint(1):asc"],
            "Invalid syntax for the geo parameter: expected expression formated like `_geoPoint(latitude,"
            " longitude)` and ending by `:asc` or `:desc`, found `_geoPoint(1)`.",
        ),
    ],
)
def test_sort_errors(clusters: tuple[RunningCluster, RunningCluster], sort: list[str], message: str) -> None:
    cluster = clusters[1]
    expected = {
        "message": message,
        "code": "invalid_document_sort",
        "type": "invalid_request",
        "link": DOCS_LINK + "invalid_document_sort",
    }
    post = httpx.post(f"{cluster.url}/indexes/items/documents/fetch", json={"sort": sort}, timeout=30)
    get = httpx.get(f"{cluster.url}/indexes/items/documents", params={"sort": ",".join(sort)}, timeout=30)
    for response in (post, get):
        assert response.status_code == 400
        assert response.json() == expected


def test_sort_type_error_and_unknown_index(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    cluster = clusters[0]
    response = httpx.post(
        f"{cluster.url}/indexes/items/documents/fetch", json={"sort": "price:asc"}, timeout=30
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_document_sort"
    assert response.json()["message"].startswith("Invalid value type at `.sort`")
    response = httpx.get(f"{cluster.url}/indexes/nope/documents", params={"sort": "price:asc"}, timeout=30)
    assert response.status_code == 404
    assert response.json()["code"] == "index_not_found"
