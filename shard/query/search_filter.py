"""A search's ``filter``: the documents it leaves out of the candidates, on one shard."""

from __future__ import annotations

from typing import Any

from pyroaring import BitMap

from common.features import FilterFeatures
from shard.filter.apply import FilterScope, filter_documents
from shard.index.env import decode_u32, external_key
from shard.query.context import SearchContext


def filtered_out(ctx: SearchContext, params: dict[str, Any]) -> BitMap:
    """The live documents a search's ``filter`` leaves out (none without a filter): excluded from the
    candidates like negated words, so placeholder and keyword searches and their counts agree.
    A facet search's filter errors name no index, as the reference's, nor do /similar's (which also
    leaves out its target, ``similarTo``)."""
    similar = params.get("similarTo")
    named = None if "facetSearch" in params or similar is not None else ctx.index_uid
    code = "invalid_search_filter" if similar is None else "invalid_similar_filter"
    scope = FilterScope(ctx.env, ctx.txn, ctx.index_id, named, ctx.settings, ctx.state, ctx.cache_ref)
    features = FilterFeatures.from_params(params)
    matching = filter_documents(scope, params.get("filter"), code=code, features=features)
    left_out = BitMap() if matching is None else ctx.state.live - matching
    if similar is not None:
        packed = ctx.txn.get(external_key(ctx.index_id, similar), db=ctx.env.external_ids)
        if packed is not None:
            left_out.add(decode_u32(packed))
    return left_out
