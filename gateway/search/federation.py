"""Federated search (search.md §2.3): the queries' hits merged into one ranked, paginated list.

Every query runs from offset 0 for as many hits as the federation's window needs (capped by its index's
``maxTotalHits``); the lists are then merged by weighted score sequences, where sort rules take part
with their values (``federated_order.py``).
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections.abc import Iterator, Sequence
from typing import Any

from sanic import Sanic

from gateway.search.federated_order import Weighted
from gateway.search.federated_rules import check_comparable
from gateway.search.multi import Query
from gateway.search.params import page_window
from gateway.search.response import add_page_fields, uuid7
from gateway.search.runner import IndexSearch, RankedHit, hit_object, search_index, union_params


def merge_federated(
    queries: Sequence[Query], results: Sequence[IndexSearch], wanted: int
) -> list[tuple[Query, RankedHit]]:
    """The best ``wanted`` hits of all queries, each with the query it comes from.

    Lists are merged head by head (each query's own order is kept) by ``federated_order``; hits that
    nothing separates go to the lower query position. A document found by several queries of one index
    appears once, from the query that ranks it first in the merged order.
    """
    streams = [_weighted(query, result, wanted) for query, result in zip(queries, results, strict=True)]
    seen: set[tuple[str, int]] = set()
    merged: list[tuple[Query, RankedHit]] = []
    for _, query, entry in heapq.merge(*streams, key=lambda item: item[0]):
        if len(merged) == wanted:
            break
        identity = (query.index_uid, entry.seq)
        if identity not in seen:
            seen.add(identity)
            merged.append((query, entry))
    return merged


def _weighted(query: Query, result: IndexSearch, wanted: int) -> Iterator[tuple[Weighted, Query, RankedHit]]:
    for entry in result.hits[: min(wanted, result.max_total_hits)]:
        yield Weighted(entry.groups, query.weight, entry.score, query.position), query, entry


def _federated_hit(query: Query, entry: RankedHit) -> dict[str, Any]:
    federation = {
        "indexUid": query.index_uid,
        "queriesPosition": query.position,
        "weightedRankingScore": entry.score * query.weight,
    }
    return {**hit_object(entry, query.params), "_federation": federation}


async def union_totals(app: Sanic, queries: Sequence[Query]) -> dict[str, int]:
    """For each index that several queries name, the documents at least one of them keeps (a
    document matched twice counts once): one ``countUnion`` run per such index."""
    by_index: dict[str, list[dict[str, Any]]] = {}
    for query in queries:
        by_index.setdefault(query.index_uid, []).append(query.params)
    shared = {uid: params for uid, params in by_index.items() if len(params) > 1}
    runs = [_union_total(app, uid, params) for uid, params in shared.items()]
    return dict(zip(shared, await asyncio.gather(*runs), strict=True))


async def _union_total(app: Sanic, uid: str, queries: list[dict[str, Any]]) -> int:
    result = await search_index(app, uid, {"countUnion": await union_params(app, uid, queries)}, 0)
    return result.candidates


def federated_total(queries: Sequence[Query], results: Sequence[IndexSearch], unions: dict[str, int]) -> int:
    """Sum over indexes of the documents their queries keep: an index's one query's candidates, or
    the union count (``union_totals``) of an index several queries name."""
    per_index = {query.index_uid: result.candidates for query, result in zip(queries, results, strict=True)}
    return sum(unions.get(uid, count) for uid, count in per_index.items())


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
    check_comparable(queries, results)
    window = page_window(federation)
    offset, limit, _ = window
    hits = [_federated_hit(*pair) for pair in merge_federated(queries, results, offset + limit)[offset:]]
    total = federated_total(queries, results, unions)
    body: dict[str, Any] = {"hits": hits, "processingTimeMs": int((time.perf_counter() - started) * 1000)}
    add_page_fields(body, window, federation, total)
    body.update(facets or {})
    body["requestUid"] = uuid7()
    return body
