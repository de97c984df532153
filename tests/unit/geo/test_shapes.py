"""``_geojson`` shapes on a shard: stored with the documents, kept in step, matched by geo filters.

The store is driven through batches like the scheduler does; expected ids come from hand-placed shapes
far from every region's edge, and the regions themselves are checked against haversine distances.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import shapely

from common.filter.ast import Filter, GeoBoundingBox, GeoPolygon, GeoRadius, Or, Span
from shard.facet.reader import FacetReader
from shard.filter.evaluate import FilterEvaluator
from shard.geo.filters import GeoFilters
from shard.geo.regions import circle_region
from shard.index import catalog
from shard.index.settings import load_settings
from shard.index.state import load_state
from shard.store import ShardStore
from shard.vector.filters import vector_filter
from tests.support.shard_batches import apply

_SPAN = Span(1, 2)


def point(lng: float, lat: float) -> dict[str, Any]:
    return {"type": "Point", "coordinates": [lng, lat]}


def square(lng: float, lat: float, half: float) -> dict[str, Any]:
    ring = [
        [lng - half, lat - half],
        [lng + half, lat - half],
        [lng + half, lat + half],
        [lng - half, lat + half],
        [lng - half, lat - half],
    ]
    return {"type": "Polygon", "coordinates": [ring]}


DOCS: list[dict[str, Any]] = [
    {"id": 1, "_geojson": point(2.35, 48.85)},  # Paris
    {"id": 2, "_geojson": {"type": "LineString", "coordinates": [[-10, 0], [10, 0]]}},  # across (0, 0)
    {"id": 3, "_geojson": square(20, 20, 1)},
    {"id": 4, "_geojson": {"type": "Feature", "geometry": point(179.5, 0), "properties": {}}},
    {
        "id": 5,
        "_geojson": {
            "type": "FeatureCollection",
            "features": [
                {"type": "Feature", "geometry": point(-60, -30)},
                {"type": "Feature", "geometry": square(60, 30, 2)},
            ],
        },
    },
    {"id": 6, "_geojson": None, "_geo": {"lat": 20.2, "lng": 19.8}},
    {"id": 7, "_geo": {"lat": 48.86, "lng": 2.34}},
    {"id": 8, "_geojson": {"type": "MultiPoint", "coordinates": [[100, 10], [-100, -10]]}},
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ShardStore]:
    opened = ShardStore(tmp_path / "store")
    settings(opened, ["_geojson"])
    apply(opened, add(*DOCS))
    yield opened
    opened.close()


def add(*docs: dict[str, Any]) -> dict[str, Any]:
    entries = [[str(doc["id"]), doc, position] for position, doc in enumerate(docs)]
    return {"op": "addDocuments", "task": 1, "index": "i", "mode": "replace", "documents": entries}


def settings(store: ShardStore, filterable: list[Any]) -> None:
    values = {"filterableAttributes": filterable}
    apply(store, {"op": "updateSettings", "task": 1, "index": "i", "settings": values})


def ids(store: ShardStore, tree: Filter, *, cached: bool = False) -> list[int]:
    generation = store.cache.generation
    with store.env.lmdb.begin() as txn:
        index_id = catalog.lookup(store.env, txn, "i")
        assert index_id is not None
        state = load_state(store.env, txn, index_id)
        reader = FacetReader(txn, store.env.facets, index_id, state)
        cache = (store.cache, generation) if cached else None
        geo = GeoFilters(reader, store.env.shapes, index_id, load_settings(store.env, txn, index_id), cache)
        vectors = partial(vector_filter, store.env, txn, index_id, {})
        docs = FilterEvaluator(reader, state.live, geo, vectors).evaluate(tree)
    stored = [doc["id"] for _, doc in store.list_documents("i", 0, 100)[0]]
    documents = dict(zip(state.live, stored, strict=True))
    return sorted(documents[doc_id] for doc_id in docs)


def polygon(*points: tuple[float, float]) -> GeoPolygon:
    return GeoPolygon(points, _SPAN)


def test_polygon_matches_intersecting_shapes(store: ShardStore) -> None:
    assert ids(store, polygon((48, 2), (49, 2), (49, 3), (48, 3))) == [1]
    # A thin triangle crossing the line 2 only, away from its ends.
    assert ids(store, polygon((-1, 5), (1, 5), (0, 6))) == [2]
    # Inside the square of 3 without touching a vertex; and one corner of 5's square.
    assert ids(store, polygon((20.5, 20.5), (20.6, 20.5), (20.5, 20.6))) == [3]
    assert ids(store, polygon((31.9, 61.9), (40, 61.9), (40, 70))) == [5]
    assert ids(store, polygon((-31, -61), (-29, -61), (-29, -59), (-31, -59))) == [5]
    assert ids(store, polygon((5, 95), (15, 95), (15, 105), (5, 105))) == [8]
    assert ids(store, polygon((-50, -50), (-40, -50), (-40, -40))) == []


def test_radius_and_box_union_points_and_shapes(store: ShardStore) -> None:
    radius = GeoRadius(48.85, 2.35, 5_000, None, _SPAN)
    assert ids(store, radius) == [1]
    settings(store, ["_geojson", "_geo"])
    assert ids(store, radius) == [1, 7]
    assert ids(store, GeoBoundingBox((21, 21), (19, 19), _SPAN)) == [3, 6]
    # Wraps across the antimeridian: 4 is at 179.5.
    assert ids(store, GeoBoundingBox((1, -179), (-1, 179), _SPAN)) == [4]
    assert ids(store, GeoRadius(0.0, -179.9, 100_000, 8, _SPAN)) == [4]
    settings(store, ["_geo"])
    assert ids(store, radius) == [7]
    assert ids(store, polygon((48, 2), (49, 2), (49, 3))) == []


def test_writes_keep_shapes_in_step(store: ShardStore) -> None:
    paris = polygon((48, 2), (49, 2), (49, 3), (48, 3))
    apply(store, add({"id": 1, "_geojson": point(0, 0)}, {"id": 9, "_geojson": point(2.5, 48.5)}))
    assert ids(store, paris) == [9]
    apply(store, {"op": "deleteDocuments", "task": 2, "index": "i", "ids": ["9"]})
    assert ids(store, paris, cached=True) == []
    assert ids(store, paris, cached=True) == []
    apply(
        store,
        {
            "op": "deleteByFilter",
            "task": 3,
            "index": "i",
            "primaryKey": "id",
            "filter": "_geoPolygon([19, 19], [21, 19], [21, 21], [19, 21])",
        },
    )
    either = Or((polygon((19, 19), (21, 19), (21, 21)), polygon((-1, -1), (1, -1), (0, 1))))
    assert ids(store, either) == [1, 2]
    settings(store, [])
    with store.env.lmdb.begin() as txn:
        assert not list(txn.cursor(store.env.shapes))
    settings(store, ["_geojson"])
    assert ids(store, paris) == []
    assert ids(store, polygon((-1, -1), (1, -1), (0, 1))) == [1, 2]


def test_circle_region_follows_haversine() -> None:
    """Points clearly inside (outside) the radius are inside (outside) the 125-gon, wherever it lies."""
    rng = random.Random(3)
    lats, lngs = (
        np.array([rng.uniform(-90, 90) for _ in range(2000)]),
        np.array([rng.uniform(-180, 180) for _ in range(2000)]),
    )
    for lat, lng, meters in [
        (48.8, 2.3, 50_000),
        (10, 179.8, 900_000),
        (-80, 40, 2_000_000),
        (85, -170, 1_200_000),
        (0, 0, 19_000_000),
        (3, 4, 30_000_000),
    ]:
        region = circle_region(lat, lng, meters, None)
        inside = shapely.contains_xy(region, lngs, lats)
        for index in range(len(lats)):
            distance = _haversine(lat, lng, lats[index], lngs[index])
            if abs(distance - meters) > 0.01 * meters:
                assert inside[index] == (distance < meters), (lat, lng, meters, lats[index], lngs[index])


def _haversine(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    half_lng = math.radians(lng2 - lng1) / 2
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(half_lng) ** 2
    return 2 * 6_371_000 * math.asin(math.sqrt(a))
