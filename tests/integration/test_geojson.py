"""``_geojson`` documents and geo filters on them (search.md §4.4, core.md document errors) on 1-shard and
3-shard clusters.

Expectations come from ``tests.support.geo_reference`` (ray casting, segment crossings, haversine), never
from the engine; both clusters must give the same answer. A radius on shapes is a 125-gon on the engine's
side, so shapes within 2% of the circle's edge may go either way; everything else is exact.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.search_support import assert_error, make_index, one_and_three_shards, search
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster
from tests.support.geo_reference import haversine, parts, shape_distance, shape_intersects_polygon

KINDS = ["shop", "park", "road", "zone"]


def _ring(rng: random.Random, lng: float, lat: float) -> list[list[float]]:
    """A convex polygon around (lng, lat), closed."""
    count, radius, turn = rng.randint(3, 6), rng.uniform(0.3, 2.5), rng.uniform(0, math.pi)
    ring = [[lng + radius * math.cos(turn + 2 * math.pi * k / count),
             lat + radius * math.sin(turn + 2 * math.pi * k / count)] for k in range(count)]
    return [*ring, ring[0]]


def _shape(rng: random.Random, lng: float, lat: float) -> dict[str, Any]:
    kind = rng.random()
    point = {"type": "Point", "coordinates": [lng, lat]}
    if kind < 0.3:
        return point
    if kind < 0.4:
        return {"type": "Feature", "geometry": point, "properties": {"name": "x"}}
    if kind < 0.55:
        line = [[lng + rng.uniform(-3, 3), lat + rng.uniform(-3, 3)] for _ in range(rng.randint(2, 4))]
        return {"type": "LineString", "coordinates": line}
    if kind < 0.8:
        return {"type": "Polygon", "coordinates": [_ring(rng, lng, lat)]}
    if kind < 0.9:
        return {"type": "MultiPoint", "coordinates": [[lng, lat], [lng + rng.uniform(-4, 4), lat]]}
    return {"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [_ring(rng, lng, lat)]}},
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [lng - 3, lat + 1]}},
    ]}


def _document(rng: random.Random, doc_id: int) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": doc_id, "title": f"place {doc_id}", "kind": rng.choice(KINDS)}
    near_antimeridian = doc_id % 12 == 0
    lng = rng.choice([178.5, -178.5]) + rng.uniform(-1, 1) if near_antimeridian else rng.uniform(-25, 25)
    lat = rng.uniform(-25, 25)
    if rng.random() < 0.75:
        doc["_geojson"] = _shape(rng, lng, lat) if not near_antimeridian else {
            "type": "Point", "coordinates": [lng, lat]}
    if rng.random() < 0.3:
        doc["_geo"] = {"lat": rng.uniform(-25, 25), "lng": rng.uniform(-25, 25)}
    return doc


_RNG = random.Random(11)
DOCS = [_document(_RNG, doc_id) for doc_id in range(260)]
SETTINGS = {"filterableAttributes": ["_geojson", "_geo", "kind"], "sortableAttributes": ["_geo"]}
# [lat, lng] outlines: convex, concave (a star), and small.
POLYGONS = [
    [(-10, -10), (-10, 5), (8, 12), (6, -12)],
    [(12 * math.sin(2 * math.pi * k / 10) * (1 if k % 2 else 0.4),
      12 * math.cos(2 * math.pi * k / 10) * (1 if k % 2 else 0.4)) for k in range(10)],
    [(15, 15), (22, 16), (18, 24)],
]


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with one_and_three_shards("places", DOCS, SETTINGS) as pair:
        yield pair


def both(clusters: tuple[RunningCluster, RunningCluster], **params: Any) -> list[int]:
    """Sorted hit ids of a placeholder search, after checking both clusters agree."""
    one, three = (sorted(hit["id"] for hit in search(c, "places", limit=1000, **params)["hits"])
                  for c in clusters)
    assert one == three
    return one


def polygon_filter(points: list[tuple[float, float]]) -> str:
    return "_geoPolygon(" + ", ".join(f"[{lat}, {lng}]" for lat, lng in points) + ")"


def expected_polygon(points: list[tuple[float, float]], docs: list[dict[str, Any]] = DOCS) -> list[int]:
    region = [(lng, lat) for lat, lng in points]
    return sorted(doc["id"] for doc in docs if shape_intersects_polygon(parts(doc.get("_geojson")), region))


def _geo(doc: dict[str, Any]) -> tuple[float, float] | None:
    """The ``_geo`` point as (lng, lat)."""
    geo = doc.get("_geo")
    return None if geo is None else (geo["lng"], geo["lat"])


# --- filters ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("points", POLYGONS)
def test_polygon_matches_shapes_intersecting_it(
    clusters: tuple[RunningCluster, RunningCluster], points: list[tuple[float, float]]
) -> None:
    expected = expected_polygon(points)
    assert expected, "the polygon should meet some shapes"
    assert both(clusters, filter=polygon_filter(points)) == expected
    # Combined with other conditions, and negated.
    assert both(clusters, filter=f"{polygon_filter(points)} AND kind = park") == sorted(
        i for i in expected if DOCS[i]["kind"] == "park")
    assert both(clusters, filter=f"NOT {polygon_filter(points)}") == sorted(
        set(range(len(DOCS))) - set(expected))


@pytest.mark.parametrize(("lat", "lng", "meters"), [(0, 0, 800_000), (-12, 9, 300_000), (2, -178.9, 250_000)])
def test_radius_unions_points_and_shapes(
    clusters: tuple[RunningCluster, RunningCluster], lat: float, lng: float, meters: float
) -> None:
    found = set(both(clusters, filter=f"_geoRadius({lat}, {lng}, {meters})"))
    sure, maybe = set(), set()
    for doc in DOCS:
        point = _geo(doc)
        if point is not None and haversine((lng, lat), point) <= meters:
            sure.add(doc["id"])
        distance = shape_distance(parts(doc.get("_geojson")), (lng, lat))
        if distance < meters * 0.98:
            sure.add(doc["id"])
        elif distance <= meters * 1.02:
            maybe.add(doc["id"])
    assert sure, "the circle should hold some documents"
    assert sure <= found <= sure | maybe


@pytest.mark.parametrize(("top_right", "bottom_left"), [((10, 15), (-5, -8)), ((5, -175), (-5, 175))])
def test_bounding_box_unions_points_and_shapes(
    clusters: tuple[RunningCluster, RunningCluster],
    top_right: tuple[float, float],
    bottom_left: tuple[float, float],
) -> None:
    (top, right), (bottom, left) = top_right, bottom_left
    spans = [(left, right)] if left <= right else [(left, 180.0), (-180.0, right)]
    boxes = [[(west, bottom), (east, bottom), (east, top), (west, top)] for west, east in spans]
    expected = sorted(
        doc["id"]
        for doc in DOCS
        if any(shape_intersects_polygon(parts(doc.get("_geojson")), box) for box in boxes)
        or ((point := _geo(doc)) is not None and bottom <= point[1] <= top
            and any(west <= point[0] <= east for west, east in spans))
    )
    assert expected
    assert both(clusters, filter=f"_geoBoundingBox([{top}, {right}], [{bottom}, {left}])") == expected


def test_every_filter_route_uses_shapes(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    points = POLYGONS[0]
    expected = expected_polygon(points)
    geo_filter = polygon_filter(points)
    for cluster in clusters:
        client = client_for(cluster)
        index = client.index("places")
        multi = client.multi_search([{"indexUid": "places", "filter": geo_filter, "limit": 1000}])
        assert sorted(hit["id"] for hit in multi["results"][0]["hits"]) == expected
        facets = httpx.post(f"{cluster.url}/indexes/places/facet-search", timeout=30,
                            json={"facetName": "kind", "filter": geo_filter}).json()
        counts = {kind: sum(1 for i in expected if DOCS[i]["kind"] == kind) for kind in KINDS}
        assert {hit["value"]: hit["count"] for hit in facets["facetHits"]} == {
            kind: n for kind, n in counts.items() if n}
        listed = httpx.get(f"{cluster.url}/indexes/places/documents", timeout=30,
                           params={"filter": geo_filter, "limit": 1000}).json()
        assert sorted(doc["id"] for doc in listed["results"]) == expected
        assert listed["total"] == len(expected)
        fetched = index.get_documents({"filter": geo_filter, "limit": 1000})
        assert sorted(doc.id for doc in fetched.results) == expected


def test_delete_by_polygon(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    points = POLYGONS[1]
    for cluster in clusters:
        make_index(cluster, "deletable", DOCS, SETTINGS)
        index = client_for(cluster).index("deletable")
        task = wait_task(cluster, index.delete_documents(filter=polygon_filter(points)).task_uid)
        assert task["status"] == "succeeded", task
        assert task["details"]["deletedDocuments"] == len(expected_polygon(points))
        left = index.get_documents({"limit": 1000}).results
        assert sorted(doc.id for doc in left) == sorted(set(range(len(DOCS))) - set(expected_polygon(points)))


def test_polygon_needs_geojson_filterable(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    for cluster in clusters:
        make_index(cluster, "pointsonly", DOCS[:5], {"filterableAttributes": ["_geo"]})
        text = "_geoPolygon([1, 2], [3, 4], [5, 6])"
        response = httpx.post(f"{cluster.url}/indexes/pointsonly/search", json={"filter": text}, timeout=30)
        assert_error(response, "invalid_search_filter", "Index `pointsonly`: Attribute `_geojson` is not"
                     " filterable. Available filterable attribute patterns are: `_geo`.\n14:15 " + text)
        # Without `_geojson`, radius filters read points only: a shape in range does not count.
        inside = {"id": 99, "_geojson": {"type": "Point", "coordinates": [0, 0]}}
        assert wait_task(cluster, client_for(cluster).index("pointsonly").add_documents([inside]).task_uid)[
            "status"] == "succeeded"
        hits = search(cluster, "pointsonly", filter="_geoRadius(0, 0, 1000)")["hits"]
        assert [hit["id"] for hit in hits] == []


# --- validation -------------------------------------------------------------------------------------


def test_invalid_geojson_fails_the_task(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    bad = {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[1, 2]]}}
    for cluster in clusters:
        make_index(cluster, "strict", [{"id": "first"}], {"filterableAttributes": ["_geojson"]})
        index = client_for(cluster).index("strict")
        good = {"id": "ok", "_geojson": {"type": "Point", "coordinates": [1, 2]}}
        task = wait_task(cluster, index.add_documents([good, {"id": "bad", "_geojson": bad}]).task_uid)
        assert task["status"] == "failed"
        assert task["error"] == {
            "message": "Index `strict`: The `_geojson` field in the document with the id: `\"bad\"` is not"
            " valid GeoJSON: `_geojson.geometry.coordinates` must hold at least 2 positions but holds 1.",
            "code": "invalid_document_geojson_field",
            "type": "invalid_request",
            "link": "https://docs.meilisearch.com/errors#invalid_document_geojson_field",
        }
        assert [doc.id for doc in index.get_documents().results] == ["first"]


def _fail_settings(cluster: RunningCluster, uid: str, settings: dict[str, Any]) -> dict[str, Any]:
    task = wait_task(cluster, client_for(cluster).index(uid).update_settings(settings).task_uid)
    assert task["status"] == "failed", task
    return dict(task["error"])


def test_settings_refused_when_stored_documents_are_invalid(
    clusters: tuple[RunningCluster, RunningCluster],
) -> None:
    docs: list[dict[str, Any]] = [
        {"id": n, "_geo": {"lat": 1, "lng": 2}, "_geojson": {"type": "Point", "coordinates": [2, 1]}}
        for n in range(30)
    ]
    docs[7]["_geojson"] = {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0.5]]]}
    docs[12]["_geojson"] = "nowhere"
    docs[9]["_geo"] = {"lat": "north", "lng": 2}
    docs[21]["_geo"] = [1, 2]
    for cluster in clusters:
        make_index(cluster, "stored", docs, {"filterableAttributes": ["kind"]})
        before = httpx.get(f"{cluster.url}/indexes/stored/settings", timeout=30).json()
        error = _fail_settings(cluster, "stored", {"filterableAttributes": ["kind", "_geojson"]})
        assert error["code"] == "invalid_document_geojson_field"
        assert error["message"] == (
            "Index `stored`: The `_geojson` field in the document with the id: `7` is not valid GeoJSON:"
            " `_geojson.coordinates[0]` is a linear ring and must end with its first position."
        )
        error = _fail_settings(cluster, "stored", {"sortableAttributes": ["_geo"]})
        assert error["code"] == "invalid_document_geo_field"
        assert error["message"] == (
            "Index `stored`: Could not parse latitude in the document with the id: `9`. Was expecting a"
            " finite number but instead got `\"north\"`."
        )
        assert httpx.get(f"{cluster.url}/indexes/stored/settings", timeout=30).json() == before
        assert client_for(cluster).index("stored").get_documents({"limit": 100}).total == 30
        response = httpx.post(f"{cluster.url}/indexes/stored/search", timeout=30,
                              json={"filter": "_geoRadius(1, 2, 10)"})
        assert response.status_code == 400
        # Fixed documents let the same change through; shapes and points are then searchable.
        point = {"type": "Point", "coordinates": [2, 1]}
        fixed = [{"id": n, "_geo": {"lat": 1, "lng": 2}, "_geojson": point} for n in (7, 9, 12, 21)]
        assert wait_task(cluster, client_for(cluster).index("stored").add_documents(fixed).task_uid)[
            "status"] == "succeeded"
        task = wait_task(cluster, client_for(cluster).index("stored").update_settings(
            {"filterableAttributes": ["kind", "_geojson"], "sortableAttributes": ["_geo"]}).task_uid)
        assert task["status"] == "succeeded", task
        square = "_geoPolygon([0.5, 1.5], [1.5, 1.5], [1.5, 2.5], [0.5, 2.5])"
        hits = search(cluster, "stored", filter=square, limit=100)
        assert sorted(hit["id"] for hit in hits["hits"]) == list(range(30))
