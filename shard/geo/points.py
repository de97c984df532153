"""Every document's ``_geo`` point as arrays, and the distances, radius and bounding boxes computed on them.

Points come from the ``_geo.lat`` / ``_geo.lng`` facet values (stored when ``_geo`` is filterable or
sortable; numeric strings are parsed here), read through their sort columns and kept in the read cache
for the generation, so a radius filter or a geo sort is one vectorised pass over the shard's points.
Distances are haversine on a sphere of 6,371 km, in meters, as the reference computes them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

from shard.facet.column import MISSING, SortColumn, sort_column, to_bitmap, to_ids
from shard.facet.reader import FacetReader
from shard.index.read_cache import GEO_POINTS, CacheRef, cached_value

EARTH_RADIUS_METERS = 6_371_000.0
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class GeoPoints:
    lat: Floats
    """Per internal document id, in degrees; NaN for a document without a point."""
    lng: Floats

    def distances(self, ids: npt.NDArray[np.uint32], point: tuple[float, float]) -> Floats:
        """Meters from ``point`` to each document's point; NaN for documents without one."""
        return haversine(point, self.lat[ids], self.lng[ids])

    def within_radius(self, universe: BitMap, point: tuple[float, float], meters: float) -> BitMap:
        """Inclusive, with the reference's tolerance of one float epsilon."""
        ids = self._located(universe)
        return to_bitmap(ids[self.distances(ids, point) <= meters + np.finfo(np.float64).eps])

    def within_box(
        self, universe: BitMap, top_right: tuple[float, float], bottom_left: tuple[float, float]
    ) -> BitMap:
        """Inclusive ranges; a right edge west of the left one wraps across the antimeridian."""
        ids = self._located(universe)
        lat, lng = self.lat[ids], self.lng[ids]
        (top, right), (bottom, left) = top_right, bottom_left
        inside = (lat >= bottom) & (lat <= top)
        inside &= (lng >= left) & (lng <= right) if left <= right else (lng >= left) | (lng <= right)
        return to_bitmap(ids[inside])

    def point(self, doc_id: int) -> tuple[float, float] | None:
        lat, lng = float(self.lat[doc_id]), float(self.lng[doc_id])
        return None if math.isnan(lat) or math.isnan(lng) else (lat, lng)

    def _located(self, universe: BitMap) -> npt.NDArray[np.uint32]:
        ids = to_ids(universe)
        ids = ids[ids < len(self.lat)]
        return ids[~np.isnan(self.lat[ids])]


def haversine(point: tuple[float, float], lat: Floats, lng: Floats) -> Floats:
    lat1, lng1 = math.radians(point[0]), math.radians(point[1])
    lat2, lng2 = np.radians(lat), np.radians(lng)
    a = np.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * np.cos(lat2) * np.sin((lng2 - lng1) / 2) ** 2
    result: Floats = 2 * EARTH_RADIUS_METERS * np.arcsin(np.sqrt(a))
    return result


def geo_points(reader: FacetReader, cached: CacheRef | None) -> GeoPoints:
    prefix = reader.field("_geo.lat")
    key = (GEO_POINTS, 0 if prefix is None else int.from_bytes(prefix[:4], "big"), 0)

    def build() -> GeoPoints:
        lat = _coordinates(sort_column(reader, "_geo.lat", cached))
        lng = _coordinates(sort_column(reader, "_geo.lng", cached))
        return GeoPoints(np.where(np.isnan(lng), np.nan, lat), np.where(np.isnan(lat), np.nan, lng))

    return cached_value(cached, key, build, lambda points: int(points.lat.nbytes * 2))


def _coordinates(column: SortColumn) -> Floats:
    """Each document's coordinate: its value, a numeric string parsed (validation admitted only those)."""
    values = np.array([_number(value) for value in column.values] + [math.nan], dtype=np.float64)
    ranks = np.where(column.ascending == MISSING, len(column.values), column.ascending)
    result: Floats = values[ranks]
    return result


def _number(value: float | str) -> float:
    try:
        return float(value)
    except ValueError:
        return math.nan


def geo_distance(hit: dict[str, Any], point: tuple[float, float]) -> int | None:
    """``_geoDistance``: meters from the first geo sort point to the ``_geo`` the hit shows, rounded
    half away from zero; None when the hit shows no usable point."""
    geo = hit.get("_geo")
    if not isinstance(geo, dict):
        return None
    try:
        lat, lng = float(geo["lat"]), float(geo["lng"])
    except (KeyError, TypeError, ValueError):
        return None
    meters = float(haversine(point, np.array([lat]), np.array([lng]))[0])
    return math.floor(meters + 0.5)
