"""Pinned documents (dynamic search rules): the ones a search's rules pin that this shard holds.

The gateway picks the pinned ids from the rules and places the documents in the merged page; a shard
only says which of them it holds and the search's ``filter`` keeps (the reference shows a pinned
document only when the filter matches it, whatever the query words), and renders them as hits. They
are taken out of the ranked candidates, so a pinned document that also matches appears once.
"""

from __future__ import annotations

from typing import Any

from pyroaring import BitMap

from shard.index.env import decode_u32, external_key
from shard.query.context import SearchContext


def pinned_documents(ctx: SearchContext, params: dict[str, Any], filtered_out: BitMap) -> dict[int, str]:
    """Internal id -> external id of the ``pinned`` documents this shard holds, live and kept by the
    filter (``filtered_out``: the live documents it leaves out), in the order the gateway sent them."""
    found: dict[int, str] = {}
    for external_id in params.get("pinned") or ():
        packed = ctx.txn.get(external_key(ctx.index_id, external_id), db=ctx.env.external_ids)
        if packed is None:
            continue
        doc_id = decode_u32(packed)
        if doc_id in ctx.state.live and doc_id not in filtered_out:
            found.setdefault(doc_id, external_id)
    return found
