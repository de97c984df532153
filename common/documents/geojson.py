"""``_geojson`` validation at indexing (core.md error ``invalid_document_geojson_field``).

Only an index where ``_geojson`` is filterable checks it, as with ``_geo``: the shapes are indexed for
geo filters, so a value the shards could not turn into a shape must fail its task rather than be silently
unmatched. Accepted: any RFC 7946 geometry (``Point`` … ``GeometryCollection``) and the ``Feature`` /
``FeatureCollection`` wrappers; positions are ``[longitude, latitude]`` (an altitude is allowed and
ignored) within the usual degree ranges. ``null`` or no ``_geojson`` means the document has no shape.
The message names the document, the path inside the value and what is wrong with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from common.documents.primary_key import DocumentError

_CODE = "invalid_document_geojson_field"
_POSITIONS = {
    "Point": 0, "MultiPoint": 1, "LineString": 1, "MultiLineString": 2, "Polygon": 2, "MultiPolygon": 3
}
"""Geometry type -> how many array levels hold its positions."""
_WRAPPERS = ("Feature", "FeatureCollection", "GeometryCollection")


def uses_geojson(settings: Mapping[str, Any]) -> bool:
    """``_geojson`` named in ``filterableAttributes`` (string rules only, search.md §6.3)."""
    filterable: Sequence[Any] = settings.get("filterableAttributes") or []
    return "_geojson" in filterable


def check_geojson(index_uid: str, document: Mapping[str, Any], document_id: Any) -> None:
    value = document.get("_geojson")
    if value is None:
        return
    problem = geojson_problem(value)
    if problem is not None:
        raise DocumentError(
            _CODE,
            f"Index `{index_uid}`: The `_geojson` field in the document with the id:"
            f" `{orjson.dumps(document_id).decode()}` is not valid GeoJSON: {problem}.",
        )


def geojson_problem(value: Any, path: str = "_geojson") -> str | None:
    """What makes ``value`` unusable as a shape, or None when it is a valid GeoJSON object."""
    if not isinstance(value, dict):
        return f"`{path}` must be a GeoJSON object but is `{_json(value)}`"
    kind = value.get("type")
    if kind == "Feature":
        if "geometry" not in value:
            return f"`{path}` is a Feature without a `geometry` field"
        geometry = value["geometry"]
        return None if geometry is None else geojson_problem(geometry, f"{path}.geometry")
    if kind in ("FeatureCollection", "GeometryCollection"):
        member = "features" if kind == "FeatureCollection" else "geometries"
        items = value.get(member)
        if not isinstance(items, list):
            return f"`{path}` is a {kind} whose `{member}` field is not an array"
        for position, item in enumerate(items):
            where = f"{path}.{member}[{position}]"
            if kind == "FeatureCollection" and (not isinstance(item, dict) or item.get("type") != "Feature"):
                return f"`{where}` must be a Feature"
            problem = geojson_problem(item, where)
            if problem is not None:
                return problem
        return None
    if kind not in _POSITIONS:
        expected = ", ".join(f"`{name}`" for name in (*_POSITIONS, *_WRAPPERS))
        return f"`{path}.type` must be one of {expected} but is `{_json(kind)}`"
    if "coordinates" not in value:
        return f"`{path}` is a {kind} without a `coordinates` field"
    return _coordinates_problem(kind, value["coordinates"], _POSITIONS[kind], f"{path}.coordinates")


def _coordinates_problem(kind: str, value: Any, depth: int, path: str) -> str | None:
    if depth == 0:
        return _position_problem(value, path)
    if not isinstance(value, list):
        return f"`{path}` must be an array but is `{_json(value)}`"
    if kind == "Polygon" and depth == 2 and not value:
        return f"`{path}` must hold at least one linear ring"
    for position, item in enumerate(value):
        problem = _coordinates_problem(kind, item, depth - 1, f"{path}[{position}]")
        if problem is not None:
            return problem
    if depth == 1 and kind in ("LineString", "MultiLineString") and len(value) < 2:
        return f"`{path}` must hold at least 2 positions but holds {len(value)}"
    if depth == 1 and kind in ("Polygon", "MultiPolygon"):
        if len(value) < 4:
            return f"`{path}` is a linear ring and must hold at least 4 positions but holds {len(value)}"
        if value[0] != value[-1]:
            return f"`{path}` is a linear ring and must end with its first position"
    return None


def _position_problem(value: Any, path: str) -> str | None:
    if not isinstance(value, list) or len(value) not in (2, 3):
        return f"`{path}` must be a position `[longitude, latitude]` but is `{_json(value)}`"
    for position, number in enumerate(value):
        if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number):
            return f"`{path}[{position}]` must be a finite number but is `{_json(number)}`"
    lng, lat = value[0], value[1]
    if not -180 <= lng <= 180:
        return f"`{path}[0]` is a longitude and must be between -180 and 180 but is `{_json(lng)}`"
    if not -90 <= lat <= 90:
        return f"`{path}[1]` is a latitude and must be between -90 and 90 but is `{_json(lat)}`"
    return None


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()
