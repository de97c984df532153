"""A shard's search replies kept until its next batch: the same query on the same data has one answer.

Search-as-you-type, paging back and forth and popular queries send the same parameters again and again;
answering them from memory skips the ranking, the facet counting and the hits' formatting, and a hit is
answered on the event loop without the hop to the search thread. The cache is exact: a reply is kept
under the raw parameters the gateway sent (``SearchRequest.query_json``) and the index uid, and the whole
cache goes with every batch the shard applies (``ShardStore.apply_batch``: documents, settings, swaps,
deletions, compactions), as the read cache does and with its rule for a search that ran across a batch
(``shard/index/read_cache.py``: a reply computed on a snapshot older than the last batch is not kept).

Some replies do not depend on the data alone, so they are never kept: those whose ranking the search
cutoff cut short (``degraded``: they depend on the time the search had), those with the steps' timings
(``showPerformanceDetails``), and semantic or hybrid queries (``vector``, ``hybrid``, ``media``), whose
query vector may come from an embedder, a remote service each search is expected to ask.
"""

from __future__ import annotations

from typing import Any

from common.rpc import shard_pb2
from shard.index.read_cache import CacheRef, ReadCache

_UNCACHED = ("showPerformanceDetails", "hybrid", "vector", "media")
"""Parameters whose presence keeps a search's reply out of the cache (see the module's docstring)."""

ResultKey = tuple[str, bytes]
"""The index uid and the raw parameters."""

_KEY_WEIGHT = 200
"""Bytes counted per entry beside its parameters and reply: the key tuple, the dict slot, the message."""


def result_key(index_uid: str, query_json: bytes, params: dict[str, Any]) -> ResultKey | None:
    """The cache key of a search, or None when its reply must not be kept."""
    if any(params.get(name) for name in _UNCACHED):
        return None
    return index_uid, query_json


def kept_reply(results: ReadCache, key: ResultKey | None) -> shard_pb2.SearchReply | None:
    if key is None:
        return None
    found: shard_pb2.SearchReply | None = results.get((0, 0, key))
    return found


def keep_reply(results: CacheRef, key: ResultKey | None, reply: shard_pb2.SearchReply) -> None:
    """Keeps a reply computed from a snapshot taken at ``results``' generation (read before the
    snapshot, so a batch committed meanwhile makes the cache refuse it)."""
    if key is None or reply.degraded or reply.error_json or not reply.index_found:
        return
    cache, generation = results
    cache.put(generation, (0, 0, key), reply, reply.ByteSize() + len(key[1]) + _KEY_WEIGHT)
