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
from gateway.search.feedback import FEEDBACK_DOCUMENTS, feedback_query, refined
from gateway.search.hybrid import (
    VectorQuery,
    fuse,
    fuse_scores,
    keyword_params,
    keyword_suffices,
    semantic_kind,
    vector_query,
)
from gateway.search.order import merge_order
from gateway.search.pins import Pin, pin_details
from gateway.search.typo_caps import settle_typos

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
    semantic: bool = False
    """Found by the vector leg of a semantic or hybrid search (``semanticHitCount``)."""

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
    semantic: bool = False
    """A semantic or hybrid search: the response counts its ``semanticHitCount``."""
    query_vector: list[float] | None = None
    """The vector the vector leg ranked with, when its hits took part (``queryVector``)."""


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
    vector = await vector_query(app, uid, params)
    if vector is None:
        shard_query = await resolved_params(app, uid, keyword_params(params))
    else:
        shard_query = await resolved_params(app, uid, params)
        shard_query["vector"], shard_query["semanticOnly"] = vector.vector, vector.semantic_only
    shard_query["offset"], shard_query["limit"] = 0, wanted
    if pins:
        shard_query["pinned"] = [pin.document_id for pin in pins]
    shard_query.update(app.ctx.features.filters().params())
    if steps is not None:
        shard_query["showPerformanceDetails"] = True  # shards time their own steps
    transit = Transit()
    if needs_term_counts(shard_query) and not (vector is not None and vector.semantic_only):
        shard_query["termCounts"] = await term_counts(cluster, uid, shard_query, steps, transit)
    if vector is not None and vector.adds_scores and not vector.semantic_only and not params.get("sort"):
        embedder = params["hybrid"]["embedder"]
        best = await _fan_out(cluster, uid, feedback_query(shard_query), FEEDBACK_DOCUMENTS, steps, transit)
        vector = refined(vector, best.pages, embedder)
        shard_query["vector"] = vector.vector
    limit = wanted if vector is None else vector.leg_depth(wanted)
    while True:
        found = await _fan_out(cluster, uid, shard_query, limit, steps, transit)
        cap = found.max_total_hits
        ranked = _ranked_list(found, vector, min(wanted, cap), min(limit, cap))
        merged = ranked.hits
        pinned = [
            (pin, pin_details(found.pinned[pin.document_id], pin))
            for pin in pins
            if pin.document_id in found.pinned
        ]
        if all(hit.distinct is None for hit in merged):
            lap(steps, "merge")
            return IndexSearch(
                merged[:wanted],
                ranked.candidates,
                cap,
                ranked.facets,
                found.rule_groups,
                found.deduplicated,
                transit.nanoseconds,
                pinned,
                semantic_kind(params),
                ranked.vector,
            )
        kept, settled = deduplicate(merged, ranked.pages, min(limit, cap), wanted)
        lap(steps, "merge")
        if settled or limit >= cap:
            # The count round sees the legs the page came from.
            counted = shard_query if ranked.vector is not None else keyword_params(shard_query)
            count = await _distinct_count(cluster, uid, counted, kept, steps, transit)
            return IndexSearch(
                kept,
                count,
                cap,
                ranked.facets,
                found.rule_groups,
                True,
                transit.nanoseconds,
                pinned,
                semantic_kind(params),
                ranked.vector,
            )
        limit = min(limit * DISTINCT_GROWTH, cap)


@dataclass(frozen=True)
class _Ranked:
    hits: list[RankedHit]
    """Merged over the shards, best first."""
    pages: list[list[RankedHit]]
    """The shard pages they come from (for distinct)."""
    candidates: int
    facets: list[dict[str, Any]]
    vector: list[float] | None
    """The query vector, when the vector leg's hits took part."""


def _ranked_list(found: _ShardPages, vector: VectorQuery | None, wanted: int, depth: int) -> _Ranked:
    """The keyword leg alone, the vector leg alone, or both fused (search.md §7.6), with the count
    and facets of the documents they stand for; ``depth``: the hits each shard was asked for."""
    keyword = list(heapq.merge(*found.pages, key=RankedHit.order))
    alone = _Ranked(keyword, found.pages, found.candidates, found.facets, None)
    if vector is None:
        return alone
    semantic = list(heapq.merge(*found.semantic_pages, key=RankedHit.order))
    if vector.semantic_only:
        return _Ranked(semantic, found.semantic_pages, found.candidates, found.facets, vector.vector)
    # Each leg cut at the hits each shard was asked for, as one shard would return them: a deeper hit
    # would add its score on some shard counts and not others.
    added = fuse_scores(keyword[:depth], semantic[:depth], vector.ratio) if vector.adds_scores else None
    if added is None and keyword_suffices(keyword, vector.ratio, wanted):
        # Step 2 belongs to the contract's merge: where scores add, a keyword hit's score alone does
        # not say that its similarity would change nothing (both legs have run by now anyway).
        return alone
    fused = fuse(keyword, semantic, vector.ratio) if added is None else added
    pages = found.pages + found.semantic_pages
    return _Ranked(fused, pages, found.union_candidates, found.union_facets, vector.vector)


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
    semantic_pages: list[list[RankedHit]] = field(default_factory=list)
    """Each shard's vector leg (semantic and hybrid searches), best first."""
    union_candidates: int = 0
    """Hybrid: the documents either leg keeps, summed over shards."""
    union_facets: list[dict[str, Any]] = field(default_factory=list)


async def _fan_out(
    cluster: Any, uid: str, shard_query: dict[str, Any], limit: int, steps: Steps | None, transit: Transit
) -> _ShardPages:
    """Every shard's best ``limit`` hits, the summed candidate count, ``maxTotalHits`` and facets."""
    replies = await _round(cluster, uid, shard_query, {"limit": limit}, steps, transit)
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
    semantic_pages: list[list[RankedHit]] = []
    pinned: dict[str, RankedHit] = {}
    for reply in found:
        hits = _hits(reply.hits_json, reply.hit_documents)
        ranked = len(hits) - len(reply.pinned_ids)
        pages.append(hits[:ranked])
        pinned.update(zip(reply.pinned_ids, hits[ranked:], strict=True))
        if reply.semantic_hits_json:
            semantic_pages.append(_hits(reply.semantic_hits_json, reply.semantic_hit_documents, True))
    facets = [orjson.loads(reply.facets_json) for reply in found if reply.facets_json]
    union_facets = [orjson.loads(reply.union_facets_json) for reply in found if reply.union_facets_json]
    groups: list[dict[str, Any] | None] = next(
        (orjson.loads(reply.rule_groups_json) for reply in found if reply.rule_groups_json), []
    )
    candidates = sum(reply.candidates for reply in found)
    deduplicated = any(reply.deduplicated for reply in found)
    union = sum(reply.union_candidates for reply in found)
    return _ShardPages(
        pages, candidates, cap, facets, groups, deduplicated, pinned, semantic_pages, union, union_facets
    )


def _hits(entries_json: bytes, documents: Sequence[bytes], semantic: bool = False) -> list[RankedHit]:
    return [
        _ranked(entry, document, semantic)
        for entry, document in zip(orjson.loads(entries_json), documents, strict=True)
    ]


def needs_term_counts(query: dict[str, Any]) -> bool:
    """The frequency strategy drops terms by their index-wide counts; ``bm25`` (a Sift extension)
    weighs them by those counts, with the index's document count and field lengths."""
    strategy = query.get("matchingStrategy")
    return strategy in ("frequency", "bm25") and bool((query.get("q") or "").strip())


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


async def _round(
    cluster: Any,
    uid: str,
    shard_query: dict[str, Any],
    extra: dict[str, Any],
    steps: Steps | None,
    transit: Transit,
) -> list[shard_pb2.SearchReply]:
    """One round of ``shard_query`` plus ``extra``, sent again if a typo cap cut a lookup over the
    whole index: ``shard_query`` then carries the settled words for the search's later rounds
    (``typo_caps.py``)."""
    while True:
        request = shard_pb2.SearchRequest(index_uid=uid, query_json=orjson.dumps({**shard_query, **extra}))
        replies = await transit.round(cluster, request)
        if steps is not None:
            _record_round(steps, replies)
        if not await settle_typos(cluster, uid, shard_query, replies, transit):
            return replies


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
    replies = await _round(cluster, uid, shard_query, {"countTerms": True}, steps, transit or Transit())
    totals: list[int] = []
    for reply in replies:
        if reply.index_found and not reply.error_json:
            for term, count in enumerate(orjson.loads(reply.hits_json)):
                if term < len(totals):
                    totals[term] += count
                else:
                    totals.append(count)
    return totals


def _ranked(entry: list[Any], document: bytes, semantic: bool = False) -> RankedHit:
    seq, key, score, details, _, distinct, groups = entry
    return RankedHit(seq, tuple(key), score, details, document, distinct, tuple(groups), semantic)


def render_hit(entry: RankedHit, params: dict[str, Any]) -> dict[str, Any] | orjson.Fragment:
    """The hit as the response shows it: the shard's JSON as is, unless score fields are asked for."""
    if not params.get("showRankingScore") and not params.get("showRankingScoreDetails"):
        return orjson.Fragment(entry.hit_json)
    return hit_object(entry, params)


def hit_object(entry: RankedHit, params: dict[str, Any]) -> dict[str, Any]:
    """The hit parsed, with the score fields the query asked for (for responses that add fields)."""
    hit: dict[str, Any] = orjson.loads(entry.hit_json)
    hit.update(score_fields(entry, params))
    return hit


def score_fields(entry: RankedHit, params: dict[str, Any]) -> dict[str, Any]:
    """``_rankingScore`` and ``_rankingScoreDetails``, as far as the query asked for them."""
    fields: dict[str, Any] = {}
    if params.get("showRankingScore"):
        fields["_rankingScore"] = entry.score
    if params.get("showRankingScoreDetails"):
        fields["_rankingScoreDetails"] = entry.details
    return fields
