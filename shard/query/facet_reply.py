"""The facet part of a shard's search reply: a distribution (``facets``) or a facet search.

Both run on the search's candidates (filter and query), in the search's read snapshot.
"""

from __future__ import annotations

from typing import Any

from pyroaring import BitMap

from shard.facet.counting import ValueCounter
from shard.facet.distribution import shard_facets
from shard.facet.search import shard_facet_search
from shard.query.context import SearchContext


def facet_reply(ctx: SearchContext, candidates: BitMap, params: dict[str, Any]) -> dict[str, Any] | None:
    """None when the query asks for neither."""
    if params.get("facetSearch") is None and params.get("facets") is None:
        return None
    counter = ValueCounter(ctx.env, ctx.txn, ctx.index_id, ctx.settings, ctx.state, candidates, ctx.cache_ref)
    if params.get("facetSearch") is not None:
        return shard_facet_search(counter, ctx.analyzer, params["facetSearch"], ctx.cache_ref)
    return shard_facets(counter, params["facets"])
