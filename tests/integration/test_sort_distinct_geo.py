"""Sort, distinct and geo search (search.md §1.6, §1.8, §4.4, §5, §6.1) on 1-shard and 3-shard clusters.

Every expectation is computed here from the documents with plain Python (value order of §5, haversine
distances in meters), and both clusters must give exactly that answer.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.search_support import (
    DOCS_LINK,
    make_index,
    one_and_three_shards,
    search,
    search_get,
    search_raw,
)
from tests.integration.sort_reference import add_price_and_brand, facet_values, haversine, point, sorted_ids
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster


def _document(rng: random.Random, doc_id: int) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": doc_id, "title": rng.choice(["red shirt", "blue shirt", "red hat", "shoe"])}
    add_price_and_brand(rng, doc)
    doc["sku"] = f"g{rng.randint(0, 24)}"
    where = rng.random()
    if where < 0.4:
        doc["_geo"] = {"lat": 48.85 + rng.uniform(-0.3, 0.3), "lng": 2.35 + rng.uniform(-0.4, 0.4)}
    elif where < 0.55:
        lng = rng.choice([179.5, -179.5]) + rng.uniform(-0.4, 0.4)
        doc["_geo"] = {"lat": rng.uniform(-20, 20), "lng": lng}
    elif where < 0.65:
        lat, lng = round(rng.uniform(-60, 60), 5), round(rng.uniform(-170, 170), 5)
        doc["_geo"] = {"lat": str(lat), "lng": str(lng)}
    elif where < 0.9:
        doc["_geo"] = {"lat": rng.uniform(-80, 80), "lng": rng.uniform(-180, 180)}
    return doc


_RNG = random.Random(6)
DOCS = [_document(_RNG, doc_id) for doc_id in range(300)]
SETTINGS = {
    "filterableAttributes": ["_geo", "sku", "brand"],
    "sortableAttributes": ["price", "brand", "_geo"],
    "searchCutoffMs": 60000,
}


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with one_and_three_shards("items", DOCS, SETTINGS) as clusters:
        yield clusters


def both(clusters: tuple[RunningCluster, RunningCluster], **params: Any) -> dict[str, Any]:
    """The answer of the 1-shard cluster, after checking the 3-shard one gives the same."""
    one, three = (search(cluster, "items", **params) for cluster in clusters)
    for body in (one, three):
        body.pop("processingTimeMs")
        body.pop("requestUid")
    assert one == three
    return one


# --- reference --------------------------------------------------------------------------------------


def expected_sort(criteria: list[tuple[str, bool]]) -> list[int]:
    return sorted_ids(DOCS, criteria)


def ids(body: dict[str, Any]) -> list[int]:
    return [hit["id"] for hit in body["hits"]]


# --- sort -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "criteria",
    [
        [("price", True)],
        [("price", False)],
        [("brand", True), ("price", False)],
        [("brand", False), ("price", True)],
    ],
)
def test_placeholder_sort_follows_value_order(
    clusters: tuple[RunningCluster, RunningCluster], criteria: list[tuple[str, bool]]
) -> None:
    sort = [f"{field}:{'asc' if ascending else 'desc'}" for field, ascending in criteria]
    body = both(clusters, sort=sort, limit=1000, showRankingScoreDetails=True)
    assert ids(body) == expected_sort(criteria)
    first = body["hits"][0]["_rankingScoreDetails"]
    assert list(first) == sort
    assert first[sort[0]]["order"] == 0 and "score" not in first[sort[0]]


def test_sort_pages_and_get_form(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    expected = expected_sort([("price", False)])
    body = both(clusters, sort=["price:desc"], offset=37, limit=25)
    assert ids(body) == expected[37:62]
    response = search_get(clusters[1], "items", {"sort": "price:desc", "offset": "37", "limit": "25"})
    assert ids(response.json()) == expected[37:62]


def test_sort_does_not_change_ranking_scores(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    sorted_body = both(clusters, q="red shirt", sort=["price:asc"], limit=300, showRankingScore=True)
    plain = both(clusters, q="red shirt", limit=300, showRankingScore=True)
    scores = {hit["id"]: hit["_rankingScore"] for hit in plain["hits"]}
    assert {hit["id"]: hit["_rankingScore"] for hit in sorted_body["hits"]} == scores
    assert sorted_body["estimatedTotalHits"] == plain["estimatedTotalHits"]


def test_custom_ranking_rules(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    for cluster in clusters:
        make_index(cluster, "custom", DOCS, {"rankingRules": ["brand:desc", "price:asc", "words"]})
    one, three = (search(cluster, "custom", limit=1000) for cluster in clusters)
    assert ids(one) == ids(three) == expected_sort([("brand", False), ("price", True)])


def test_sort_errors(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    cluster = clusters[1]
    cases = [
        (
            ["title:asc"],
            "Index `items`: Attribute `title` is not sortable. Available sortable attributes are:"
            " `_geo, brand, price`.",
        ),
        (
            ["price"],
            "Invalid syntax for the sort parameter: expected expression ending by `:asc` or `:desc`,"
            " found `price`.",
        ),
        (
            ["_geo:asc"],
            "`_geo` is a reserved keyword and thus can't be used as a sort expression. Use the"
            " _geoPoint(latitude, longitude) built-in rule to sort on _geo field coordinates.",
        ),
        (
            ["_geoPoint(91, 0):asc"],
            "Bad latitude `91`. Latitude must be contained between -90 and 90 degrees.",
        ),
    ]
    for sort, message in cases:
        response = search_raw(cluster, "items", sort=sort)
        assert response.status_code == 400
        assert response.json() == {
            "message": message,
            "code": "invalid_search_sort",
            "type": "invalid_request",
            "link": DOCS_LINK + "invalid_search_sort",
        }
    make_index(cluster, "nosort", DOCS[:5], {"sortableAttributes": ["price"], "rankingRules": ["words"]})
    response = search_raw(cluster, "nosort", sort=["price:asc"])
    assert response.json()["message"] == (
        "Index `nosort`: You must specify where `sort` is listed in the rankingRules setting to use the sort"
        " parameter at search time."
    )


# --- distinct ---------------------------------------------------------------------------------------


def expected_distinct(order: list[int], field: str) -> list[int]:
    by_id = {doc["id"]: doc for doc in DOCS}
    seen: set[Any] = set()
    kept: list[int] = []
    for doc_id in order:
        values = set(facet_values(by_id[doc_id], field))
        if values & seen:
            continue
        seen |= values
        kept.append(doc_id)
    return kept


@pytest.mark.parametrize("field", ["sku", "brand"])
def test_distinct_keeps_the_best_document_per_value(
    clusters: tuple[RunningCluster, RunningCluster], field: str
) -> None:
    order = expected_sort([("price", True)])
    body = both(clusters, sort=["price:asc"], distinct=field, limit=100)
    assert ids(body) == expected_distinct(order, field)
    paged = both(clusters, sort=["price:asc"], distinct=field, offset=3, limit=4)
    assert ids(paged) == expected_distinct(order, field)[3:7]


def test_distinct_values_split_across_shards(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    # 40 documents share one value: on 3 shards every shard holds some, only the first may remain.
    docs = [{"id": i, "group": "same" if i % 5 else f"own{i}", "rank": i} for i in range(40)]
    for cluster in clusters:
        make_index(cluster, "split", docs, {"distinctAttribute": "group", "sortableAttributes": ["rank"]})
    bodies = [search(cluster, "split", sort=["rank:desc"], limit=10) for cluster in clusters]
    expected = [39, 35, 30, 25, 20, 15, 10, 5, 0]
    assert [ids(body) for body in bodies] == [expected, expected]
    # The kept hits exclude every other document of their groups: nothing else remains.
    assert [body["estimatedTotalHits"] for body in bodies] == [9, 9]


def test_distinct_errors(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    response = search_raw(clusters[1], "items", distinct="title")
    assert response.status_code == 400
    assert response.json() == {
        "message": "Index `items`: Attribute `title` is not filterable and thus, cannot be used as distinct"
        " attribute. Available filterable attributes patterns are: `_geo, brand, sku`.",
        "code": "invalid_search_distinct",
        "type": "invalid_request",
        "link": DOCS_LINK + "invalid_search_distinct",
    }


# --- geo --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("meters", [10_000, 1_000_000, 30_000])
def test_geo_radius(clusters: tuple[RunningCluster, RunningCluster], meters: int) -> None:
    center = (48.85, 2.35)
    expected = sorted(
        doc["id"] for doc in DOCS if (p := point(doc)) is not None and haversine(center, p) <= meters
    )
    body = both(clusters, filter=f"_geoRadius(48.85, 2.35, {meters})", limit=1000)
    assert sorted(ids(body)) == expected
    assert body["estimatedTotalHits"] == len(expected)


@pytest.mark.parametrize(
    ("top_right", "bottom_left"),
    [((49.0, 2.5), (48.7, 2.2)), ((20.0, -179.6), (-20.0, 179.6)), ((90.0, 180.0), (0.0, -180.0))],
)
def test_geo_bounding_box(
    clusters: tuple[RunningCluster, RunningCluster],
    top_right: tuple[float, float],
    bottom_left: tuple[float, float],
) -> None:
    (top, right), (bottom, left) = top_right, bottom_left

    def inside(p: tuple[float, float]) -> bool:
        in_lng = left <= p[1] <= right if left <= right else p[1] >= left or p[1] <= right
        return bottom <= p[0] <= top and in_lng

    expected = sorted(doc["id"] for doc in DOCS if (p := point(doc)) is not None and inside(p))
    assert expected
    body = both(clusters, filter=f"_geoBoundingBox([{top}, {right}], [{bottom}, {left}])", limit=1000)
    assert sorted(ids(body)) == expected


@pytest.mark.parametrize("ascending", [True, False])
def test_geo_sort_and_distance(clusters: tuple[RunningCluster, RunningCluster], ascending: bool) -> None:
    center = (48.8, 2.3)
    located = [(haversine(center, p), doc["id"]) for doc in DOCS if (p := point(doc)) is not None]
    located.sort(key=lambda pair: (pair[0] if ascending else -pair[0], pair[1]))
    missing = [doc["id"] for doc in DOCS if point(doc) is None]
    order = "asc" if ascending else "desc"
    body = both(clusters, sort=[f"_geoPoint(48.8, 2.3):{order}"], limit=1000, showRankingScoreDetails=True)
    assert ids(body) == [doc_id for _, doc_id in located] + missing
    distances = dict((doc_id, distance) for distance, doc_id in located)
    for hit in body["hits"]:
        if hit["id"] in distances:
            assert hit["_geoDistance"] == math.floor(distances[hit["id"]] + 0.5)
            details = hit["_rankingScoreDetails"][f"_geoPoint(48.8, 2.3):{order}"]
            assert details["distance"] == pytest.approx(distances[hit["id"]])
        else:
            assert "_geoDistance" not in hit


def test_geo_radius_with_sort_and_query(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    body = both(
        clusters, q="shirt", filter="_geoRadius(48.85, 2.35, 20000)", sort=["_geoPoint(48.85, 2.35):asc"]
    )
    distances = [hit["_geoDistance"] for hit in body["hits"]]
    assert all(distance <= 20000 for distance in distances)


def test_geo_validation_at_indexing(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    cluster = clusters[1]
    index = client_for(cluster).index("items")
    cases = [
        (
            {"lat": 1},
            'Could not find longitude in the document with the id: `"bad"`. Was expecting a'
            " `_geo.lng` field.",
        ),
        (
            "foo",
            'The `_geo` field in the document with the id: `"bad"` is not an object. Was expecting an'
            ' object with the `_geo.lat` and `_geo.lng` fields but instead got `"foo"`.',
        ),
        (
            {"lat": "x", "lng": None},
            "Could not parse latitude nor longitude in the document with the id:"
            ' `"bad"`. Was expecting finite numbers but instead got `"x"` and `null`.',
        ),
        (
            {"lat": 1, "lng": 2, "z": 3},
            'The `_geo` field in the document with the id: `"bad"` contains the'
            ' following unexpected fields: `{"z":3}`.',
        ),
    ]
    for geo, message in cases:
        task = wait_task(cluster, index.add_documents([{"id": "bad", "_geo": geo}]).task_uid)
        assert task["status"] == "failed"
        assert task["error"]["code"] == "invalid_document_geo_field"
        assert task["error"]["message"] == f"Index `items`: {message}"
    # An index that does not use `_geo` stores it as any other field.
    make_index(cluster, "nogeo", [{"id": 1, "_geo": "anywhere"}])
