"""Searching one index: fan the query out to every shard and merge their ranked hits.

Shards rank locally and return per-rule local scores; comparing those lexicographically, then the
documents' insertion order, merges N shards into exactly the list one shard holding every document
would return.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from sanic import Sanic

from common.errors import ApiError
from common.rpc import shard_pb2
from common.settings.pagination import DEFAULT_MAX_TOTAL_HITS
from common.timing import Steps, lap
from gateway.foreign import resolve_foreign
from gateway.search.distinct import DISTINCT_GROWTH, deduplicate
from gateway.search.order import merge_order
from gateway.search.pins import Pin, pin_details

# Parameters the gateway handles itself; everything else travels to the shards.
_GATEWAY_ONLY = frozenset(
    {"page", "hitsPerPage", "showRankingScore", "showRankingScoreDetails", "showPerformanceDetails"}
)


@dataclass(frozen=True)
class RankedHit:
    seq: int
    """Global insertion order: the final tie-break, lower first."""
    key: tuple[Any, ...]
    """Per-rule local scores and sort values in rule order, see ``order.py``."""
    score: float
    details: dict[str, Any]
    hit_json: bytes
    """The hit as the shard rendered it (a JSON object): written into the response unparsed."""
    distinct: list[list[Any]] | None = None
    """With distinct: the hit's values of the distinct attribute, ``[kind, value]`` pairs."""
    groups: tuple[Any, ...] = ()
    """Folded relevancy scores and ``[ascending, value]`` sort values, see ``federated_order.py``."""

    def order(self) -> tuple[tuple[tuple[Any, ...], ...], int]:
        """Ascending order of this is best-first: the key's merge order, then insertion order."""
        return merge_order(self.key), self.seq


@dataclass(frozen=True)
class IndexSearch:
    hits: list[RankedHit]
    """Best first, at most the ``wanted`` asked for."""
    candidates: int
    max_total_hits: int
    facets: list[dict[str, Any]] = field(default_factory=list)
    """Each shard's facet reply when the query asked for facets (summed by ``gateway/search/facets``)."""
    rule_groups: list[dict[str, Any] | None] = field(default_factory=list)
    """With ``ruleGroups``: the query's rules as federated search groups them (``federated_rules``)."""
    deduplicated: bool = False
    """Distinct applied: the query's ``distinct`` or the index's ``distinctAttribute`` setting."""
    transit_ns: int = 0
    """The time the search's rounds to the shards spent between processes (``Transit``)."""
    pinned: list[tuple[Pin, RankedHit]] = field(default_factory=list)
    """The pinned documents found (the filter keeps them), in placing order, as hits scored for the
    pin; in neither ``hits`` nor ``candidates``."""


class Transit:
    """The time a search's rounds to the shards spend between processes: each round's wall time
    less the slowest shard's own time on it (``SearchReply.work_ns``). ``processingTimeMs`` counts the
    engine's work, the gateway's and the shards', not this: the reference, one process, has no such
    wait (gateway/search/response.py, ``processing_ms``)."""

    __slots__ = ("nanoseconds",)

    def __init__(self) -> None:
        self.nanoseconds = 0

    async def round(self, cluster: Any, request: shard_pb2.SearchRequest) -> list[shard_pb2.SearchReply]:
        sent = time.perf_counter_ns()
        replies: list[shard_pb2.SearchReply] = await cluster.search(request)
        slowest = max((reply.work_ns for reply in replies), default=0)
        self.nanoseconds += max(time.perf_counter_ns() - sent - slowest, 0)
        return replies


async def search_index(
    app: Sanic,
    uid: str,
    params: dict[str, Any],
    wanted: int,
    steps: Steps | None = None,
    pins: Sequence[Pin] = (),
) -> IndexSearch:
    """The index's best ``wanted`` hits (before ``maxTotalHits`` capping, which shards apply).

    ``steps``: given when the query asked for ``showPerformanceDetails``; the shards' steps and the
    gateway's (``fan-out``: every round trip, ``merge``) are recorded in it. ``pins``: the documents
    dynamic search rules pin (``pins.py``): left out of the hits and candidates, returned apart.
    """
    cluster = app.ctx.cluster
    shard_query = await resolved_params(app, uid, params)
    shard_query["offset"], shard_query["limit"] = 0, wanted
    if pins:
        shard_query["pinned"] = [pin.document_id for pin in pins]
    shard_query.update(app.ctx.features.filters().params())
    if steps is not None:
        shard_query["showPerformanceDetails"] = True  # shards time their own steps
    transit = Transit()
    if needs_term_counts(shard_query):
        shard_query["termCounts"] = await term_counts(cluster, uid, shard_query, steps, transit)
    limit = wanted
    while True:
        found = await _fan_out(cluster, uid, shard_query, limit, steps, transit)
        pages, cap = found.pages, found.max_total_hits
        merged = list(heapq.merge(*pages, key=RankedHit.order))
        pinned = [
            (pin, pin_details(found.pinned[pin.document_id], pin))
            for pin in pins
            if pin.document_id in found.pinned
        ]
        if all(hit.distinct is None for hit in merged):
            lap(steps, "merge")
            return IndexSearch(
                merged[:wanted],
                found.candidates,
                cap,
                found.facets,
                found.rule_groups,
                found.deduplicated,
                transit.nanoseconds,
                pinned,
            )
        kept, settled = deduplicate(merged, pages, min(limit, cap), wanted)
        lap(steps, "merge")
        if settled or limit >= cap:
            count = await _distinct_count(cluster, uid, shard_query, kept, steps, transit)
            return IndexSearch(
                kept, count, cap, found.facets, found.rule_groups, True, transit.nanoseconds, pinned
            )
        limit = min(limit * DISTINCT_GROWTH, cap)


async def _distinct_count(
    cluster: Any,
    uid: str,
    shard_query: dict[str, Any],
    kept: list[RankedHit],
    steps: Steps | None,
    transit: Transit,
) -> int:
    """The candidates left once the page's kept hits exclude every other document sharing one of their
    values (what one shard holding everything counts): a second round, the values being known only now."""
    values = sorted({(kind, value) for hit in kept for kind, value in hit.distinct or ()}, key=repr)
    remaining = await _fan_out(cluster, uid, {**shard_query, "distinctValues": values}, 0, steps, transit)
    return remaining.candidates + sum(1 for hit in kept if hit.distinct)


@dataclass(frozen=True)
class _ShardPages:
    pages: list[list[RankedHit]]
    """Each shard's best hits, best first."""
    candidates: int
    """Summed over shards."""
    max_total_hits: int
    facets: list[dict[str, Any]]
    rule_groups: list[dict[str, Any] | None]
    """The same on every shard: the first one's."""
    deduplicated: bool
    pinned: dict[str, RankedHit]
    """The pinned documents the shards hold and the filter keeps, by id."""


async def _fan_out(
    cluster: Any, uid: str, shard_query: dict[str, Any], limit: int, steps: Steps | None, transit: Transit
) -> _ShardPages:
    """Every shard's best ``limit`` hits, the summed candidate count, ``maxTotalHits`` and facets."""
    shard_query = {**shard_query, "limit": limit}
    request = shard_pb2.SearchRequest(index_uid=uid, query_json=orjson.dumps(shard_query))
    replies = await transit.round(cluster, request)
    if steps is not None:
        _record_round(steps, replies)
    if not any(reply.index_found for reply in replies):
        # Shards learn an index from its first document or settings; the catalog is the authority.
        await cluster.ask_scheduler("GetIndex", {"uid": uid})
    for reply in replies:
        if reply.error_json:
            error = orjson.loads(reply.error_json)
            raise ApiError(error["code"], error["message"])
    found = [reply for reply in replies if reply.index_found]
    cap = max((reply.max_total_hits for reply in found), default=0) or DEFAULT_MAX_TOTAL_HITS
    pages: list[list[RankedHit]] = []
    pinned: dict[str, RankedHit] = {}
    for reply in found:
        hits = [
            _ranked(entry, document)
            for entry, document in zip(orjson.loads(reply.hits_json), reply.hit_documents, strict=True)
        ]
        ranked = len(hits) - len(reply.pinned_ids)
        pages.append(hits[:ranked])
        pinned.update(zip(reply.pinned_ids, hits[ranked:], strict=True))
    facets = [orjson.loads(reply.facets_json) for reply in found if reply.facets_json]
    groups: list[dict[str, Any] | None] = next(
        (orjson.loads(reply.rule_groups_json) for reply in found if reply.rule_groups_json), []
    )
    candidates = sum(reply.candidates for reply in found)
    deduplicated = any(reply.deduplicated for reply in found)
    return _ShardPages(pages, candidates, cap, facets, groups, deduplicated, pinned)


def needs_term_counts(query: dict[str, Any]) -> bool:
    return query.get("matchingStrategy") == "frequency" and bool((query.get("q") or "").strip())


def shard_params(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters that travel to the shards."""
    return {key: value for key, value in params.items() if key not in _GATEWAY_ONLY}


async def resolved_params(app: Sanic, uid: str, params: dict[str, Any]) -> dict[str, Any]:
    """``shard_params`` with the filter's ``_foreign`` joins resolved (``gateway/foreign.py``)."""
    query = shard_params(params)
    if query.get("filter") is not None:
        query["filter"] = await resolve_foreign(app, uid, query["filter"], "invalid_search_filter")
    return query


async def union_params(app: Sanic, uid: str, queries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Several queries of one index as a shard's union run takes them (``facetUnion``, ``countUnion``):
    each with its own term counts for the frequency strategy."""
    union = [await resolved_params(app, uid, query) for query in queries]
    for query in union:
        if needs_term_counts(query):
            query["termCounts"] = await term_counts(app.ctx.cluster, uid, query)
    return union


def _record_round(steps: Steps, replies: list[shard_pb2.SearchReply]) -> None:
    """One round trip to the shards (``fan-out``, summed over rounds) and each shard's own steps."""
    steps.lap("fan-out")
    for shard, reply in enumerate(replies):
        if reply.steps_json:
            steps.include(f"shard {shard}", orjson.loads(reply.steps_json))


async def term_counts(
    cluster: Any,
    uid: str,
    shard_query: dict[str, Any],
    steps: Steps | None = None,
    transit: Transit | None = None,
) -> list[int]:
    """The index-wide document count of each query term: the frequency strategy drops the most
    frequent terms first, and every shard must drop the same ones (one extra round trip)."""
    request = shard_pb2.SearchRequest(
        index_uid=uid, query_json=orjson.dumps({**shard_query, "countTerms": True})
    )
    replies = await (transit or Transit()).round(cluster, request)
    if steps is not None:
        _record_round(steps, replies)
    totals: list[int] = []
    for reply in replies:
        if reply.index_found and not reply.error_json:
            for term, count in enumerate(orjson.loads(reply.hits_json)):
                if term < len(totals):
                    totals[term] += count
                else:
                    totals.append(count)
    return totals


def _ranked(entry: list[Any], document: bytes) -> RankedHit:
    seq, key, score, details, _, distinct, groups = entry
    return RankedHit(seq, tuple(key), score, details, document, distinct, tuple(groups))


def render_hit(entry: RankedHit, params: dict[str, Any]) -> dict[str, Any] | orjson.Fragment:
    """The hit as the response shows it: the shard's JSON as is, unless score fields are asked for."""
    if not params.get("showRankingScore") and not params.get("showRankingScoreDetails"):
        return orjson.Fragment(entry.hit_json)
    return hit_object(entry, params)


def hit_object(entry: RankedHit, params: dict[str, Any]) -> dict[str, Any]:
    """The hit parsed, with the score fields the query asked for (for responses that add fields)."""
    hit: dict[str, Any] = orjson.loads(entry.hit_json)
    if params.get("showRankingScore"):
        hit["_rankingScore"] = entry.score
    if params.get("showRankingScoreDetails"):
        hit["_rankingScoreDetails"] = entry.details
    return hit
