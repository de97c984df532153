"""The regions geo filters describe, as planar (longitude, latitude) geometries to intersect shapes with.

``_geoPolygon`` is its points as written; ``_geoBoundingBox`` a box, or two when it wraps across the
antimeridian; ``_geoRadius`` the circle of points at that haversine distance, approximated by a
``resolution``-gon (search.md §4.4, default 125). A circle is built with continuous longitudes around its
centre, closed through a pole it contains, then folded back into [-180, 180], so circles crossing the
antimeridian or covering a pole keep their true extent.
"""

from __future__ import annotations

import math

import numpy as np
import shapely
from shapely import affinity
from shapely.geometry.base import BaseGeometry

from shard.geo.points import EARTH_RADIUS_METERS

DEFAULT_RESOLUTION = 125
WORLD = shapely.box(-180.0, -90.0, 180.0, 90.0)


def polygon_region(points: tuple[tuple[float, float], ...]) -> BaseGeometry:
    """``_geoPolygon``'s ``[lat, lng]`` points; a self-intersecting outline is repaired, not refused."""
    polygon = shapely.Polygon([(lng, lat) for lat, lng in points])
    return polygon if polygon.is_valid else shapely.make_valid(polygon)


def box_region(top_right: tuple[float, float], bottom_left: tuple[float, float]) -> BaseGeometry:
    (top, right), (bottom, left) = top_right, bottom_left
    if left <= right:
        return shapely.box(left, bottom, right, top)
    return shapely.union(shapely.box(left, bottom, 180.0, top), shapely.box(-180.0, bottom, right, top))


def circle_region(lat: float, lng: float, meters: float, resolution: int | None) -> BaseGeometry:
    angle = max(meters, 0.0) / EARTH_RADIUS_METERS
    if angle >= math.pi:
        return WORLD
    phi = math.radians(lat)
    if math.pi / 2 - phi <= angle and math.pi / 2 + phi <= angle:
        # Both poles inside: the world but the cap around the antipode, which holds neither.
        antipode = lng - 180.0 if lng > 0 else lng + 180.0
        hole = _folded(_cap(-lat, antipode, math.pi - angle, resolution or DEFAULT_RESOLUTION))
        return WORLD.difference(hole)
    return _folded(_cap(lat, lng, angle, resolution or DEFAULT_RESOLUTION))


def _cap(lat: float, lng: float, angle: float, resolution: int) -> BaseGeometry:
    """The circle's outline with longitudes continuous around ``lng`` (they may pass ±180)."""
    phi, bearings = math.radians(lat), np.linspace(0.0, 2 * math.pi, resolution, endpoint=False)
    sin_lat = math.sin(phi) * math.cos(angle) + math.cos(phi) * math.sin(angle) * np.cos(bearings)
    lats = np.arcsin(np.clip(sin_lat, -1.0, 1.0))
    offsets = np.arctan2(
        np.sin(bearings) * math.sin(angle) * math.cos(phi), math.cos(angle) - math.sin(phi) * sin_lat
    )
    lngs, lat_degrees = lng + np.degrees(offsets), np.degrees(lats)
    pole = 90.0 if math.pi / 2 - phi <= angle else -90.0 if math.pi / 2 + phi <= angle else None
    if pole is None:
        return shapely.Polygon(np.column_stack([lngs, lat_degrees]))
    # The outline goes once around the pole: in longitude order it spans 360 degrees; close it there.
    order = np.argsort(lngs)
    ring = np.column_stack([lngs[order], lat_degrees[order]])
    seam = (ring[0][1] + ring[-1][1]) / 2
    corners = [[lng + 180.0, seam], [lng + 180.0, pole], [lng - 180.0, pole], [lng - 180.0, seam]]
    ring = np.vstack([ring, corners])
    polygon = shapely.Polygon(ring)
    return polygon if polygon.is_valid else shapely.make_valid(polygon)


def _folded(region: BaseGeometry) -> BaseGeometry:
    """The parts of ``region`` beyond ±180 moved back by a turn, clipped to the world."""
    parts = [
        shapely.intersection(affinity.translate(region, xoff=shift), WORLD)
        for shift in (-360.0, 0.0, 360.0)
    ]
    return shapely.union_all([part for part in parts if not part.is_empty])
