"""The index's ``_geojson`` shapes in an STRtree, built once per index generation.

Filters read every stored shape (``shapes.py``) into a tree kept in the read cache, so a geo filter is
one tree query (GEOS, in C) rather than a Python loop over the documents.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import shapely
from pyroaring import BitMap
from shapely.geometry.base import BaseGeometry

from shard.facet.column import to_bitmap
from shard.index.env import Database, Txn, index_prefix
from shard.index.read_cache import GEO_SHAPES, CacheRef, cached_value


@dataclass(frozen=True)
class GeoShapes:
    ids: npt.NDArray[np.uint32]
    """The internal id of each shape of the tree, by position."""
    tree: shapely.STRtree
    weight: int
    """Its read-cache weight: GEOS objects take a few times their WKB size, the tree a node per shape."""

    def intersecting(self, universe: BitMap, region: BaseGeometry) -> BitMap:
        """Documents of ``universe`` whose shape intersects ``region`` (boundaries included)."""
        if not len(self.ids):
            return BitMap()
        found = self.tree.query(region, predicate="intersects")
        return to_bitmap(self.ids[found]) & universe


def geo_shapes(txn: Txn, db: Database, index_id: int, cached: CacheRef | None) -> GeoShapes:
    """The index's shapes, from the read cache when this generation already loaded them."""
    return cached_value(
        cached, (GEO_SHAPES, index_id, 0), lambda: _load(txn, db, index_id), lambda shapes: shapes.weight
    )


def _load(txn: Txn, db: Database, index_id: int) -> GeoShapes:
    prefix = index_prefix(index_id)
    ids: list[int] = []
    blobs: list[bytes] = []
    cursor = txn.cursor(db)
    positioned = cursor.set_range(prefix)
    while positioned and cursor.key().startswith(prefix):
        ids.append(int.from_bytes(cursor.key()[len(prefix) :], "big"))
        blobs.append(cursor.value())
        positioned = cursor.next()
    geometries = shapely.from_wkb(np.array(blobs, dtype=object)) if blobs else np.array([], dtype=object)
    weight = 4 * sum(map(len, blobs)) + 64 * len(ids)
    return GeoShapes(np.array(ids, dtype=np.uint32), shapely.STRtree(geometries), weight)
