"""Every document's ``_geo`` point as arrays, and the distances, radius and bounding boxes computed on them.

Points come from the ``_geo.lat`` / ``_geo.lng`` facet values (stored when ``_geo`` is filterable or
sortable; numeric strings are parsed here), read through their sort columns and kept in the read cache
for the generation, so a radius filter or a geo sort is one vectorised pass over the shard's points.
Distances are haversine on a sphere of 6,371 km, in meters, as the reference computes them.

A geo sort needs the nearest documents first, not every distance: each point is also kept as a unit
vector, whose dot product with the sort point orders documents as their distance does for a tenth of
the haversine's cost, so the haversine runs only on the few documents a page reaches (``nearest``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
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
Ids = npt.NDArray[np.uint32]
_FIRST_CHUNK = 64
_DOT_MARGIN = 1e-9
"""Dot products this far apart order their documents' haversine distances the same way: both are
computed to about 1e-15, and near 0 (or 180) degrees a dot difference of 1e-9 is a distance
difference of meters."""


@dataclass(frozen=True)
class GeoPoints:
    lat: Floats
    """Per internal document id, in degrees; NaN for a document without a point."""
    lng: Floats
    unit: Floats
    """Rows x, y, z: per internal document id, its point as a unit vector; NaN without a point."""

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

    def nearest(self, ids: Ids, point: tuple[float, float], ascending: bool) -> Iterator[tuple[float, Ids]]:
        """The documents of ``ids`` (each with a point), grouped by equal haversine distance to
        ``point``: nearest first (farthest first when not ``ascending``), ids ascending in a group.

        Each round takes the next ``chunk`` documents by dot product (four times more each round) and
        those within the margin of the last, measures them, and yields the groups no document left
        out can join or precede: those at most as far as the farthest of the sure ones (a document
        left out has a dot product beyond the margin, so a strictly larger distance)."""
        lat, lng = math.radians(point[0]), math.radians(point[1])
        towards = np.array([math.cos(lat) * math.cos(lng), math.cos(lat) * math.sin(lng), math.sin(lat)])
        unit = self.unit
        # A product over every point then one gather costs less than three gathers for a large share.
        fast = (towards @ unit)[ids] if 4 * len(ids) > unit.shape[1] else towards @ unit[:, ids]
        if ascending:
            fast = -fast
        chunk = _FIRST_CHUNK
        while len(ids):
            if len(ids) > 2 * chunk:
                bound = np.partition(fast, chunk)[chunk]
                taken = np.flatnonzero(fast <= bound + _DOT_MARGIN)
                sure = fast[taken] <= bound
            else:
                taken = np.arange(len(ids))
                sure = None
            found = ids[taken]
            keys = self.distances(found, point)
            if not ascending:
                keys = -keys
            if sure is not None:
                emitted = keys <= keys[sure].max()
                taken, found, keys = taken[emitted], found[emitted], keys[emitted]
            order = np.argsort(keys, kind="stable")
            found, keys = found[order], keys[order]
            starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
            ends = np.r_[starts[1:], len(keys)]
            for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
                distance = float(keys[start])
                yield (distance if ascending else -distance), found[start:end]
            left = np.ones(len(ids), dtype=bool)
            left[taken] = False
            ids, fast = ids[left], fast[left]
            chunk *= 4

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
        lat, lng = np.where(np.isnan(lng), np.nan, lat), np.where(np.isnan(lat), np.nan, lng)
        phi, lam = np.radians(lat), np.radians(lng)
        unit = np.vstack((np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)))
        return GeoPoints(lat, lng, unit)

    return cached_value(cached, key, build, lambda points: int(points.lat.nbytes * 5))


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
