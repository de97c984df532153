"""Federated search (search.md §2.3): the queries' hits merged into one ranked, paginated list.

Every query runs from offset 0 for as many hits as the federation's window needs (capped by its index's
``maxTotalHits``); the lists are then merged by weighted score sequences, where sort rules take part
with their values (``federated_order.py``). With ``federation.distinct`` every query runs with it as
its ``distinct`` (each index deduplicates its own documents), and the merge keeps the first hit of each
value across queries; when that leaves the page short, the queries are asked for twice as many.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from enum import Enum
from typing import Any

import orjson
from sanic import Sanic

from gateway.search.federated_order import Weighted
from gateway.search.hybrid import is_semantic_only, keyword_params
from gateway.search.multi import Query
from gateway.search.params import page_window
from gateway.search.pins import Pin, place
from gateway.search.response import add_page_fields, uuid7
from gateway.search.runner import IndexSearch, RankedHit, score_fields, search_index, union_params


class Fate(Enum):
    """What the merge does with a fetched hit."""

    KEPT = "kept"
    SAME_DOCUMENT = "same document"
    SAME_VALUE = "same distinct value"
    PAST_MAX_TOTAL_HITS = "past its index's maxTotalHits"


def short_of_hits(queries: Sequence[Query], results: Sequence[IndexSearch], wanted: int, asked: int) -> bool:
    """Whether ``federation.distinct`` kept fewer than ``wanted`` hits before a query that may hold more
    than the ``asked`` it returned ran out (past that point, its next hits could come first).

    Each query's hits have distinct values, so with single values a query's ``asked`` hits keep as
    many; a hit with an array value can drop several hits of another query."""
    if wanted == 0:
        return False
    unfinished = {
        query.position: len(result.hits)
        for query, result in zip(queries, results, strict=True)
        if asked < result.max_total_hits and len(result.hits) >= asked
    }
    if not unfinished:
        return False
    kept = 0
    walked: Counter[int] = Counter()
    for query, _, fate in _walk(queries, results, distinct=True):
        kept += fate is Fate.KEPT
        if kept >= wanted:
            return False
        walked[query.position] += 1
        if walked[query.position] == unfinished.get(query.position):
            return True
    return True


def _walk(
    queries: Sequence[Query], results: Sequence[IndexSearch], distinct: bool
) -> Iterator[tuple[Query, RankedHit, Fate]]:
    """Every fetched hit in merged order, with its fate: kept, or dropped as the same document or value.

    Lists are merged head by head (each query's own order is kept) by ``federated_order``; hits that
    nothing separates go to the lower query position. A document found by several queries of one index
    is kept once, from the query that ranks it first in the merged order. With ``distinct``, a hit
    sharing a distinct value with a kept hit is dropped; hits without the attribute never are. An
    index shows at most its ``maxTotalHits`` hits, whatever the number of queries naming it (as the
    reference does); the hits past that are not shown but still counted.
    """
    streams = [_weighted(query, result) for query, result in zip(queries, results, strict=True)]
    caps = {query.index_uid: result.max_total_hits for query, result in zip(queries, results, strict=True)}
    shown: Counter[str] = Counter()
    seen: set[tuple[str, int]] = set()
    values_seen: set[tuple[int, Any]] = set()
    for _, query, entry in heapq.merge(*streams, key=lambda item: item[0]):
        identity = (query.index_uid, entry.seq)
        if identity in seen:
            yield query, entry, Fate.SAME_DOCUMENT
            continue
        seen.add(identity)
        values = [(kind, value) for kind, value in entry.distinct or ()] if distinct else []
        if any(value in values_seen for value in values):
            yield query, entry, Fate.SAME_VALUE
            continue
        if shown[query.index_uid] >= caps[query.index_uid]:
            yield query, entry, Fate.PAST_MAX_TOTAL_HITS
            continue
        shown[query.index_uid] += 1
        values_seen.update(values)
        yield query, entry, Fate.KEPT


def _weighted(query: Query, result: IndexSearch) -> Iterator[tuple[Weighted, Query, RankedHit]]:
    for entry in result.hits[: result.max_total_hits]:
        yield Weighted(entry.groups, query.weight, entry.score, query.position), query, entry


def _federated_hit(query: Query, entry: RankedHit) -> dict[str, Any]:
    """The hit, ``_federation``, then the score fields it asked for (the reference's key order)."""
    federation = {
        "indexUid": query.index_uid,
        "queriesPosition": query.position,
        "weightedRankingScore": entry.score * query.weight,
    }
    return {**orjson.loads(entry.hit_json), "_federation": federation, **score_fields(entry, query.params)}


async def union_totals(
    app: Sanic, queries: Sequence[Query], results: Sequence[IndexSearch] | None = None
) -> dict[str, int]:
    """For each index that several queries name, the documents at least one of them keeps (a
    document matched twice counts once): one ``countUnion`` run per such index. Not for queries that
    deduplicate (``distinct``): a union of candidates would count every duplicate the queries drop.
    An index's ``distinctAttribute`` setting shows only in the replies: ``federated_total`` then
    sets its union aside. ``results``: the queries' own, given when some are semantic or hybrid, so
    that a query whose vector leg took part counts that leg's documents (with its vector)."""
    by_index: dict[str, list[dict[str, Any]]] = {}
    for number, query in enumerate(queries):
        params = keyword_params(query.params)
        vector = None if results is None else results[number].query_vector
        if vector is not None:
            params = {**query.params, "vector": vector, "semanticOnly": is_semantic_only(query.params)}
        by_index.setdefault(query.index_uid, []).append(params)
    shared = {
        uid: params
        for uid, params in by_index.items()
        if len(params) > 1 and all(query.get("distinct") is None for query in params)
    }
    runs = [_union_total(app, uid, params) for uid, params in shared.items()]
    return dict(zip(shared, await asyncio.gather(*runs), strict=True))


async def _union_total(app: Sanic, uid: str, queries: list[dict[str, Any]]) -> int:
    result = await search_index(app, uid, {"countUnion": await union_params(app, uid, queries)}, 0)
    return result.candidates


def federated_total(
    queries: Sequence[Query],
    results: Sequence[IndexSearch],
    unions: dict[str, int],
    walked: list[tuple[Query, RankedHit, Fate]],
) -> int:
    """Sum over indexes of the documents their queries keep.

    An index that one query names counts that query's candidates. One that several name counts the
    union of their candidates (``union_totals``), or, when they deduplicate, the sum of their counts
    minus the fetched hits found twice. ``federation.distinct`` also takes off the fetched hits it
    drops across queries. Hits past the fetched ones are not known, so those totals are estimates,
    exact when every hit was fetched. ``walked``: the fetched hits with their fates (``_walk``)."""
    deduplicating = {
        query.index_uid for query, result in zip(queries, results, strict=True) if result.deduplicated
    }
    unions = {uid: count for uid, count in unions.items() if uid not in deduplicating}
    total = sum(unions.values()) + sum(
        result.candidates
        for query, result in zip(queries, results, strict=True)
        if query.index_uid not in unions
    )
    for query, _, fate in walked:
        if fate is Fate.SAME_VALUE or (fate is Fate.SAME_DOCUMENT and query.index_uid not in unions):
            total -= 1
    return total


def _pinned(
    queries: Sequence[Query], results: Sequence[IndexSearch]
) -> list[tuple[Pin, tuple[Query, RankedHit]]]:
    """Every query's pinned documents, placed in the merged list by position, then query, then as
    one query orders them. As the reference does, each query pins for itself: a document two queries
    pin, or one query pins and another finds, is shown twice."""
    pinned = [
        (pin, query.position, (query, hit))
        for query, result in zip(queries, results, strict=True)
        for pin, hit in result.pinned
    ]
    pinned.sort(key=lambda item: (item[0].position, item[1], item[0].precedence, item[0].order))
    return [(pin, entry) for pin, _, entry in pinned]


def _pinned_documents(
    pinned: list[tuple[Pin, tuple[Query, RankedHit]]], walked: list[tuple[Query, RankedHit, Fate]]
) -> int:
    """The pinned documents the total does not count yet: once each, unless a query fetched it."""
    fetched = {(query.index_uid, entry.seq) for query, entry, _ in walked}
    documents = {(query.index_uid, entry.seq) for _, (query, entry) in pinned}
    return len(documents - fetched)


def federated_response(
    queries: Sequence[Query],
    results: Sequence[IndexSearch],
    federation: dict[str, Any],
    started: float,
    unions: dict[str, int],
    facets: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The §2.3 response (no ``query`` key); ``unions``: from ``union_totals``; ``facets``: the facet
    keys (``federated_facets.py``)."""
    window = page_window(federation)
    offset, limit, _ = window
    # One walk over every fetched hit serves the page and the total.
    walked = list(_walk(queries, results, distinct=federation.get("distinct") is not None))
    kept = [(query, entry) for query, entry, fate in walked if fate is Fate.KEPT]
    pinned = _pinned(queries, results)
    kept = place(kept, pinned, offset + limit)
    page = kept[offset : offset + limit]
    total = federated_total(queries, results, unions, walked) + _pinned_documents(pinned, walked)
    body: dict[str, Any] = {"hits": [_federated_hit(*pair) for pair in page]}
    vectors = {
        str(query.position): result.query_vector
        for query, result in zip(queries, results, strict=True)
        if query.params.get("retrieveVectors") and result.query_vector is not None
    }
    if vectors:
        body["queryVectors"] = vectors
    body["processingTimeMs"] = int((time.perf_counter() - started) * 1000)
    add_page_fields(body, window, federation, total)
    body.update(facets or {})
    body["requestUid"] = uuid7()
    if any(result.semantic for result in results):
        # search.md §2.3: the page's hits a vector leg found (the route moves it after metadata)
        body["semanticHitCount"] = sum(entry.semantic for _, entry in page)
    return body
