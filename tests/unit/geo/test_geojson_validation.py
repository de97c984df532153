"""``_geojson`` validation at indexing: what is accepted, and the message for each kind of mistake."""

from __future__ import annotations

from typing import Any

import pytest

from common.documents import DocumentError
from common.documents.geojson import check_geojson, uses_geojson

POINT = {"type": "Point", "coordinates": [2.35, 48.85]}
RING = [[0, 0], [10, 0], [10, 10], [0, 0]]
VALID: list[Any] = [
    None,
    POINT,
    {"type": "Point", "coordinates": [-180, -90, 120.5]},
    {"type": "MultiPoint", "coordinates": [[1, 2], [3, 4]]},
    {"type": "MultiPoint", "coordinates": []},
    {"type": "LineString", "coordinates": [[1, 2], [3, 4]]},
    {"type": "MultiLineString", "coordinates": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]},
    {"type": "Polygon", "coordinates": [RING]},
    {"type": "Polygon", "coordinates": [RING, [[1, 1], [2, 1], [2, 2], [1, 1]]]},
    {"type": "MultiPolygon", "coordinates": [[RING], [RING]]},
    {"type": "GeometryCollection", "geometries": [POINT, {"type": "Polygon", "coordinates": [RING]}]},
    {"type": "Feature", "geometry": POINT, "properties": {"name": "Paris"}},
    {"type": "Feature", "geometry": None, "properties": None},
    {"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": POINT}]},
    {"type": "FeatureCollection", "features": []},
]


@pytest.mark.parametrize("value", VALID)
def test_valid_values(value: Any) -> None:
    check_geojson("i", {"id": 1, "_geojson": value}, 1)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("here", "`_geojson` must be a GeoJSON object but is `\"here\"`"),
        (
            {"type": "Circle", "coordinates": [1, 2]},
            "`_geojson.type` must be one of `Point`, `MultiPoint`, `LineString`, `MultiLineString`,"
            " `Polygon`, `MultiPolygon`, `Feature`, `FeatureCollection`, `GeometryCollection` but is"
            " `\"Circle\"`",
        ),
        ({"coordinates": [1, 2]}, "`_geojson.type` must be one of `Point`, `MultiPoint`, `LineString`,"
         " `MultiLineString`, `Polygon`, `MultiPolygon`, `Feature`, `FeatureCollection`, `GeometryCollection`"
         " but is `null`"),
        ({"type": "Point"}, "`_geojson` is a Point without a `coordinates` field"),
        ({"type": "Point", "coordinates": [1]}, "`_geojson.coordinates` must be a position"
         " `[longitude, latitude]` but is `[1]`"),
        ({"type": "Point", "coordinates": [1, "2"]}, "`_geojson.coordinates[1]` must be a finite number but"
         " is `\"2\"`"),
        ({"type": "Point", "coordinates": [1, True]}, "`_geojson.coordinates[1]` must be a finite number but"
         " is `true`"),
        ({"type": "Point", "coordinates": [181, 0]}, "`_geojson.coordinates[0]` is a longitude and must be"
         " between -180 and 180 but is `181`"),
        ({"type": "Point", "coordinates": [0, -90.5]}, "`_geojson.coordinates[1]` is a latitude and must be"
         " between -90 and 90 but is `-90.5`"),
        ({"type": "MultiPoint", "coordinates": {"a": 1}}, "`_geojson.coordinates` must be an array but is"
         " `{\"a\":1}`"),
        ({"type": "LineString", "coordinates": [[1, 2]]}, "`_geojson.coordinates` must hold at least 2"
         " positions but holds 1"),
        ({"type": "MultiLineString", "coordinates": [[[1, 2], [3, 4]], []]}, "`_geojson.coordinates[1]` must"
         " hold at least 2 positions but holds 0"),
        ({"type": "Polygon", "coordinates": []}, "`_geojson.coordinates` must hold at least one linear ring"),
        ({"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [0, 0]]]}, "`_geojson.coordinates[0]` is a"
         " linear ring and must hold at least 4 positions but holds 3"),
        ({"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]}, "`_geojson.coordinates[0]`"
         " is a linear ring and must end with its first position"),
        ({"type": "MultiPolygon", "coordinates": [[RING], [[[0, 0], [1, 0], [1, 1], [0, 2], [0, 1]]]]},
         "`_geojson.coordinates[1][0]` is a linear ring and must end with its first position"),
        ({"type": "GeometryCollection", "geometries": [POINT, {"type": "Point", "coordinates": [0, 99]}]},
         "`_geojson.geometries[1].coordinates[1]` is a latitude and must be between -90 and 90 but is `99`"),
        ({"type": "GeometryCollection"}, "`_geojson` is a GeometryCollection whose `geometries` field is not"
         " an array"),
        ({"type": "Feature", "properties": {}}, "`_geojson` is a Feature without a `geometry` field"),
        ({"type": "Feature", "geometry": {"type": "Point", "coordinates": []}}, "`_geojson.geometry"
         ".coordinates` must be a position `[longitude, latitude]` but is `[]`"),
        ({"type": "FeatureCollection", "features": [POINT]}, "`_geojson.features[0]` must be a Feature"),
        ({"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": 3}]},
         "`_geojson.features[0].geometry` must be a GeoJSON object but is `3`"),
    ],
)
def test_invalid_values(value: Any, problem: str) -> None:
    with pytest.raises(DocumentError) as raised:
        check_geojson("places", {"id": "a-1", "_geojson": value}, "a-1")
    assert raised.value.to_error()["code"] == "invalid_document_geojson_field"
    assert raised.value.to_error()["message"] == (
        f"Index `places`: The `_geojson` field in the document with the id: `\"a-1\"` is not valid"
        f" GeoJSON: {problem}."
    )


def test_only_string_rules_enable_geojson() -> None:
    assert uses_geojson({"filterableAttributes": ["title", "_geojson"]})
    assert not uses_geojson({"filterableAttributes": [{"attributePatterns": ["_geojson"]}]})
    assert not uses_geojson({"sortableAttributes": ["_geojson"]})
