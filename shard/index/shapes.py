"""Every document's ``_geojson`` shape, stored as WKB per document (read back by ``shape_tree.py``).

A shape is written next to the facet values when ``_geojson`` is filterable (``ShapeWriter``, called by
the facet indexer, so settings rebuilds and index wipes cover it). Geometry is planar in (longitude,
latitude) degrees, as GeoJSON is.
"""

from __future__ import annotations

from typing import Any

import shapely
from shapely.geometry import shape
from shapely.geometry.base import BaseGeometry

from common.documents.geojson import geojson_problem
from shard.index.env import Database, Txn, encode_u32, index_prefix


def shape_of(value: Any) -> BaseGeometry | None:
    """The geometry of a ``_geojson`` value; None when it has none (``null``, a Feature without
    geometry, an empty collection) or is not valid GeoJSON (validation keeps those out of the index).
    An invalid polygon (e.g. a self-intersecting ring) is repaired rather than refused."""
    if value is None or geojson_problem(value) is not None:
        return None
    geometries = [shape(geometry) for geometry in _geometries(value)]
    if not geometries:
        return None
    geometry = geometries[0] if len(geometries) == 1 else shapely.GeometryCollection(geometries)
    if geometry.is_empty:
        return None
    return geometry if geometry.is_valid else shapely.make_valid(geometry)


def _geometries(value: dict[str, Any]) -> list[dict[str, Any]]:
    """The geometries a Feature or FeatureCollection wraps (a geometry is its own list)."""
    if value["type"] == "Feature":
        return [] if value["geometry"] is None else [value["geometry"]]
    if value["type"] == "FeatureCollection":
        return [geometry for feature in value["features"] for geometry in _geometries(feature)]
    return [value]


class ShapeWriter:
    """Keeps one index's stored shapes in step with its documents, in the batch's transaction."""

    def __init__(self, txn: Txn, db: Database, index_id: int) -> None:
        self.txn = txn
        self.db = db
        self.prefix = index_prefix(index_id)

    def write(self, doc_id: int, document: dict[str, Any]) -> None:
        geometry = shape_of(document.get("_geojson"))
        if geometry is not None:
            self.txn.put(self.prefix + encode_u32(doc_id), shapely.to_wkb(geometry), db=self.db)

    def erase(self, doc_id: int) -> None:
        self.txn.delete(self.prefix + encode_u32(doc_id), db=self.db)
