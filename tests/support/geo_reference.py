"""Independent geometry for geo test expectations: plain Python, no geometry library.

Shapes are lists of parts: a point ``(lng, lat)``, a polyline (list of points), or a polygon (rings).
Intersection is decided by ray casting and segment crossings in (lng, lat), the plane GeoJSON lives in;
distances are haversine on 6,371 km.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

Point = tuple[float, float]
EARTH_RADIUS = 6_371_000.0


def haversine(a: Point, b: Point) -> float:
    """Meters between two ``(lng, lat)`` points."""
    lat1, lat2 = math.radians(a[1]), math.radians(b[1])
    half_lng = math.radians(b[0] - a[0]) / 2
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin(half_lng) ** 2
    return 2 * EARTH_RADIUS * math.asin(min(1.0, math.sqrt(h)))


def parts(geojson: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """``("point", p)``, ``("line", [p...])`` and ``("polygon", [ring...])`` of a GeoJSON value."""
    if geojson is None:
        return []
    kind = geojson["type"]
    if kind == "Feature":
        return parts(geojson["geometry"])
    if kind == "FeatureCollection":
        return [part for feature in geojson["features"] for part in parts(feature)]
    if kind == "GeometryCollection":
        return [part for geometry in geojson["geometries"] for part in parts(geometry)]
    coordinates = geojson["coordinates"]
    if kind == "Point":
        return [("point", _point(coordinates))]
    if kind == "MultiPoint":
        return [("point", _point(c)) for c in coordinates]
    if kind == "LineString":
        return [("line", [_point(c) for c in coordinates])]
    if kind == "MultiLineString":
        return [("line", [_point(c) for c in line]) for line in coordinates]
    if kind == "Polygon":
        return [("polygon", [[_point(c) for c in ring] for ring in coordinates])]
    return [("polygon", [[_point(c) for c in ring] for ring in polygon]) for polygon in coordinates]


def _point(coordinates: list[float]) -> Point:
    return (float(coordinates[0]), float(coordinates[1]))


def inside_ring(point: Point, ring: list[Point]) -> bool:
    """Ray casting towards +lng."""
    x, y = point
    inside = False
    for (x1, y1), (x2, y2) in zip(ring, ring[1:] + ring[:1], strict=True):
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


def inside_polygon(point: Point, rings: list[list[Point]]) -> bool:
    return inside_ring(point, rings[0]) and not any(inside_ring(point, hole) for hole in rings[1:])


def _crosses(a: Point, b: Point, c: Point, d: Point) -> bool:
    def side(p: Point, q: Point, r: Point) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def _edges(points: list[Point], closed: bool) -> list[tuple[Point, Point]]:
    pairs = list(itertools.pairwise(points))
    return [*pairs, (points[-1], points[0])] if closed else pairs


def shape_intersects_polygon(shape: list[tuple[str, Any]], region: list[Point]) -> bool:
    """Whether any part of ``shape`` meets the simple polygon ``region`` (its outline, lng/lat)."""
    region_edges = _edges(region, closed=True)
    for kind, value in shape:
        if kind == "point":
            if inside_ring(value, region):
                return True
            continue
        lines = [value] if kind == "line" else value
        for line in lines:
            if any(inside_ring(p, region) for p in line):
                return True
            for a, b in _edges(line, closed=kind == "polygon"):
                if any(_crosses(a, b, c, d) for c, d in region_edges):
                    return True
        if kind == "polygon" and inside_polygon(region[0], value):
            return True
    return False


def shape_distance(shape: list[tuple[str, Any]], center: Point, steps: int = 64) -> float:
    """Meters from ``center`` to the nearest point of ``shape`` (0 inside a polygon); edges sampled."""
    best = math.inf
    for kind, value in shape:
        if kind == "point":
            best = min(best, haversine(center, value))
            continue
        if kind == "polygon" and inside_polygon(center, value):
            return 0.0
        lines = [value] if kind == "line" else value
        for line in lines:
            for a, b in _edges(line, closed=kind == "polygon"):
                for step in range(steps + 1):
                    t = step / steps
                    best = min(best, haversine(center, (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]))))
    return best
