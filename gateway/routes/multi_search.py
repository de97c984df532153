"""``POST /multi-search`` (search.md §2): several searches in one request, separate or federated.

The whole request holds one search-queue slot, taken after validation; its queries then run
concurrently. No partial results: the failing query with the lowest position decides the error.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from sanic import Blueprint, HTTPResponse, Request, Sanic

from common.errors import ApiError
from common.timing import Steps, timed
from gateway.auth.requests import access_of
from gateway.foreign import hydrate
from gateway.http.requests import json_body
from gateway.http.responses import json_response
from gateway.search.details import (
    PrimaryKeys,
    add_details,
    lookup_primary_keys,
    permitted,
    query_metadata,
    timed_step,
    wants_metadata,
)
from gateway.search.federated_facets import federated_facets
from gateway.search.federated_rules import check_comparable
from gateway.search.federation import federated_response, short_of_hits, union_totals
from gateway.search.hybrid import semantic_kind
from gateway.search.multi import MultiSearch, Query, QueryError, parse_multi_search
from gateway.search.params import page_window
from gateway.search.personalize import personalized
from gateway.search.pins import dynamic_rules, pins_of
from gateway.search.queue import search_slot
from gateway.search.runner import IndexSearch, search_index
from gateway.search.single import run_search

bp = Blueprint("multi_search")

T = TypeVar("T")


@bp.post("/multi-search", ctx_action="search")
async def multi_search(request: Request) -> HTTPResponse:
    started = time.perf_counter()
    search = parse_multi_search(json_body(request), access_of(request).restrict_search)
    if search.federation is None:
        return json_response({"results": await _separate(request, search)})
    return json_response(await _federated(request, search, started))


async def _separate(request: Request, search: MultiSearch) -> list[dict[str, Any]]:
    """Each query's single-search response, after its ``indexUid``; details per query."""
    app, queries = request.app, search.queries
    timings = [timed(query.params.get("showPerformanceDetails")) for query in queries]
    async with search_slot(app):
        keys = lookup_primary_keys(app, [q.index_uid for q in queries]) if wants_metadata(request) else None
        runs = [
            run_search(app, query.index_uid, query.params, steps, keys, index_field=True)
            for query, steps in zip(queries, timings, strict=True)
        ]
        return await _each(queries, runs)


async def _federated(request: Request, search: MultiSearch, started: float) -> dict[str, Any]:
    """One merged list; ``performanceDetails`` per ``federation.showPerformanceDetails``, with each
    query's steps under ``search > query i``; ``metadata`` lists the queries in order."""
    app, queries, federation = request.app, search.queries, search.federation
    assert federation is not None
    steps = timed(federation.get("showPerformanceDetails"))
    async with search_slot(app):
        search_steps = permitted(steps)
        keys = lookup_primary_keys(app, [q.index_uid for q in queries]) if wants_metadata(request) else None
        window = page_window(federation)
        wanted = window[0] + window[1]
        # Beside the queries: the facets, and the totals of indexes that several queries name (after
        # them when a query is semantic or hybrid: its total depends on whether its vector leg counted).
        semantic = any(semantic_kind(query.params) for query in queries)
        side_runs = asyncio.gather(
            timed_step(search_steps, "facets", federated_facets(app, queries, federation, wanted)),
            _no_unions() if semantic else union_totals(app, queries),
        )
        try:
            asked = wanted
            found = await _federated_queries(app, queries, asked, search_steps)
            check_comparable(queries, found)
            while federation.get("distinct") is not None and short_of_hits(queries, found, wanted, asked):
                asked *= 2
                found = await _federated_queries(app, queries, asked, search_steps)
        except BaseException:
            # A query's error comes first; the side runs' own outcome is dropped.
            side_runs.cancel()
            await asyncio.gather(side_runs, return_exceptions=True)
            raise
        facets, unions = await side_runs
        if semantic:
            unions = await union_totals(app, queries, found)
        if search_steps is not None:
            search_steps.lap("queries")
        body = federated_response(queries, found, federation, started, unions, facets)
        for uid in dict.fromkeys(query.index_uid for query in queries):
            await hydrate(app, uid, [hit for hit in body["hits"] if hit["_federation"]["indexUid"] == uid])
        texts = [query.params.get("q") or "" for query in queries]
        body["hits"] = await personalized(
            app.ctx.reranker, federation.get("personalize"), texts, body["hits"]
        )
        if search_steps is not None:
            search_steps.lap("federate")
        semantic_hits = body.pop("semanticHitCount", None)
        metadata = await _federated_metadata(queries, keys)
        if metadata is not None:
            body["metadata"] = metadata
        if semantic_hits is not None:
            body["semanticHitCount"] = semantic_hits  # between metadata and performanceDetails
        return add_details(body, None, steps)


async def _no_unions() -> dict[str, int]:
    return {}


async def _federated_queries(
    app: Sanic, queries: Sequence[Query], wanted: int, search_steps: Steps | None
) -> list[IndexSearch]:
    """Every query's best ``wanted`` hits, with the rule groups the merge checks (``federated_rules``)
    and the documents its dynamic search rules pin."""
    rules, now = await dynamic_rules(app), datetime.now(UTC)
    pins = [pins_of(rules, q.index_uid, q.params, now) for q in queries]
    runs = [
        search_index(
            app,
            q.index_uid,
            {**q.params, "ruleGroups": True},
            wanted,
            _query_steps(search_steps, q),
            query_pins,
        )
        for q, query_pins in zip(queries, pins, strict=True)
    ]
    return await _each(queries, runs)


def _query_steps(search_steps: Steps | None, query: Query) -> Steps | None:
    return None if search_steps is None else search_steps.child(f"query {query.position}")


async def _federated_metadata(
    queries: Sequence[Query], keys: PrimaryKeys | None
) -> list[dict[str, Any]] | None:
    """One entry per query, in query order, each with the query's ``q`` unless it is a placeholder."""
    if keys is None:
        return None
    primary_keys = await keys
    return [query_metadata(q.index_uid, primary_keys[q.index_uid], q.params.get("q")) for q in queries]


async def _each(queries: Sequence[Query], runs: Sequence[Awaitable[T]]) -> list[T]:
    """Await every query's run; the first failure in query order is raised as that query's error."""
    results: list[T] = []
    for query, outcome in zip(queries, await asyncio.gather(*runs, return_exceptions=True), strict=True):
        if isinstance(outcome, ApiError):
            raise QueryError(query.position, outcome) from None
        if isinstance(outcome, BaseException):
            raise outcome
        results.append(outcome)
    return results
