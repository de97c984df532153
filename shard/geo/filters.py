"""Geo filter conditions on one index (search.md §4.4): ``_geo`` points and ``_geojson`` shapes.

Each source is used only when its field is filterable: ``_geoRadius`` and ``_geoBoundingBox`` give the
union of the points in the region and the shapes intersecting it; ``_geoPolygon`` only looks at shapes.
Points are tested exactly (haversine, inclusive ranges); shapes against the region's planar geometry
(``regions.py``).
"""

from __future__ import annotations

from pyroaring import BitMap
from shapely.geometry.base import BaseGeometry

from common.documents.geojson import uses_geojson
from common.filter.ast import GeoBoundingBox, GeoPolygon, GeoRadius
from shard.facet.reader import FacetReader
from shard.geo.points import geo_points
from shard.geo.regions import box_region, circle_region, polygon_region
from shard.geo.shape_tree import geo_shapes
from shard.index.env import Database
from shard.index.read_cache import CacheRef
from shard.index.settings import Settings


class GeoFilters:
    def __init__(
        self,
        reader: FacetReader,
        shapes: Database,
        index_id: int,
        settings: Settings,
        cached: CacheRef | None,
    ) -> None:
        self.reader = reader
        self.shapes_db = shapes
        self.index_id = index_id
        self.cached = cached
        self.points_on = "_geo" in (settings.get("filterableAttributes") or [])
        self.shapes_on = uses_geojson(settings)

    def radius(self, universe: BitMap, node: GeoRadius) -> BitMap:
        found = BitMap()
        if self.points_on:
            points = geo_points(self.reader, self.cached)
            found |= points.within_radius(universe, (node.lat, node.lng), node.meters)
        if self.shapes_on:
            found |= self._shapes(universe, circle_region(node.lat, node.lng, node.meters, node.resolution))
        return found

    def box(self, universe: BitMap, node: GeoBoundingBox) -> BitMap:
        found = BitMap()
        if self.points_on:
            points = geo_points(self.reader, self.cached)
            found |= points.within_box(universe, node.top_right, node.bottom_left)
        if self.shapes_on:
            found |= self._shapes(universe, box_region(node.top_right, node.bottom_left))
        return found

    def polygon(self, universe: BitMap, node: GeoPolygon) -> BitMap:
        return self._shapes(universe, polygon_region(node.points)) if self.shapes_on else BitMap()

    def _shapes(self, universe: BitMap, region: BaseGeometry) -> BitMap:
        shapes = geo_shapes(self.reader.txn, self.shapes_db, self.index_id, self.cached)
        return shapes.intersecting(universe, region)
