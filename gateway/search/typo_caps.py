"""Typo derivations capped over the whole index, not per shard (``common/typo_caps.py``).

A shard keeps, per typo count, the first words in key order its own vocabulary holds; N shards could
together keep up to N times more than one shard holding every document, and other ones. A shard names
the lookups where that may happen (``SearchReply.capped_typos_json``: more than cap / N words at a
count); for those, one more round asks every shard for its words, keeps the first ``cap`` of their
union per count (what one shard would keep), and the query is sent again carrying them
(``typoWords``), which every later round of the search carries too. A lookup no cap cuts is settled as
the shards' own (null), so it is not asked about again. Queries whose lookups stay under the caps,
nearly all, cost nothing more than the names' absence in the replies.
"""

from __future__ import annotations

from typing import Any

import orjson

from common.rpc import shard_pb2
from common.typo_caps import index_wide


async def settle_typos(
    cluster: Any, uid: str, query: dict[str, Any], replies: list[shard_pb2.SearchReply], transit: Any
) -> bool:
    """Settle the lookups the replies name into ``query["typoWords"]``; whether a cap cut one, so the
    round that got ``replies`` must be sent again."""
    named = {
        tuple(key)
        for reply in replies
        if reply.capped_typos_json
        for key in orjson.loads(reply.capped_typos_json)
    }
    settled = query.get("typoWords") or []
    new = sorted(named - {tuple(entry[:3]) for entry in settled})
    if not new:
        return False
    request = shard_pb2.SearchRequest(index_uid=uid, query_json=orjson.dumps({"typoLookups": new}))
    answers = await transit.round(cluster, request)
    lists = [orjson.loads(reply.hits_json) for reply in answers if reply.index_found and not reply.error_json]
    cut_any = False
    entries = list(settled)
    for number, key in enumerate(new):
        kept, cut = index_wide([found[number] for found in lists])
        entries.append([*key, kept if cut else None])
        cut_any = cut_any or cut
    query["typoWords"] = entries
    return cut_any
