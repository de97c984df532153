"""A search's ``filter``: the documents it leaves out of the candidates, on one shard."""

from __future__ import annotations

from typing import Any

from pyroaring import BitMap

from common.features import FilterFeatures
from shard.filter.apply import FilterScope, filter_documents
from shard.query.context import SearchContext


def filtered_out(ctx: SearchContext, params: dict[str, Any]) -> BitMap:
    """The live documents a search's ``filter`` leaves out (none without a filter): excluded from the
    candidates like negated words, so placeholder and keyword searches and their counts agree.
    A facet search's filter errors name no index, as the reference's."""
    named = None if "facetSearch" in params else ctx.index_uid
    scope = FilterScope(ctx.env, ctx.txn, ctx.index_id, named, ctx.settings, ctx.state, ctx.cache_ref)
    features = FilterFeatures.from_params(params)
    matching = filter_documents(scope, params.get("filter"), code="invalid_search_filter", features=features)
    return BitMap() if matching is None else ctx.state.live - matching
