"""A route's ``filter`` on one shard: parse, check against the index's filterable rules, evaluate.

Search, document reads and delete-by-filter all come here, each with its own error code; the shard
has the index's settings, so the permission check and the evaluation use the same ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from pyroaring import BitMap

from common.features import FilterFeatures
from common.filter.errors import FilterError
from common.filter.parse import parse_filter
from common.filter.permissions import check_experimental, check_filter
from shard.facet.reader import FacetReader
from shard.filter.evaluate import FilterEvaluator
from shard.geo.filters import GeoFilters
from shard.index.env import StoreEnv, Txn
from shard.index.read_cache import CacheRef
from shard.index.settings import Settings
from shard.index.state import IndexState
from shard.vector.filters import vector_filter


@dataclass(frozen=True)
class FilterScope:
    """One index in one transaction: what a filter is checked and evaluated against."""

    env: StoreEnv
    txn: Txn
    index_id: int
    index_uid: str | None
    """The index named in filter errors: search and delete-by-filter tasks name it, document reads
    (None) do not, as in the reference."""
    settings: Settings
    state: IndexState
    cached: CacheRef | None = None
    """The shard's read cache and its generation when the snapshot began, where geo points and sort
    columns (numeric ranges) are kept; None inside a write transaction, whose state is not committed."""


def filter_documents(scope: FilterScope, raw: Any, *, code: str, features: FilterFeatures) -> BitMap | None:
    """The live documents matching ``raw`` (a string or the array form); None when there is no filter.

    ``features``: the experimental features the gateway found enabled for this request or task.
    """
    try:
        tree = parse_filter(raw)
        if tree is None:
            return None
        rules = scope.settings.get("filterableAttributes") or []
        state = scope.state
        check_filter(
            tree, rules, scope.index_uid, field_exists=lambda name: state.known_facet_field(name) is not None
        )
        check_experimental(
            tree,
            contains_filter=features.contains_filter,
            multimodal=features.multimodal,
            foreign_keys=features.foreign_keys,
        )
        reader = FacetReader(scope.txn, scope.env.facets, scope.index_id, state)
        geo = GeoFilters(reader, scope.env.shapes, scope.index_id, scope.settings, scope.cached)
        embedders = scope.settings.get("embedders") or {}
        vectors = partial(vector_filter, scope.env, scope.txn, scope.index_id, embedders)
        return FilterEvaluator(reader, state.live, geo, vectors, scope.cached).evaluate(tree)
    except FilterError as error:
        raise error.api_error(code) from None
