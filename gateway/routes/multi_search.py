"""``POST /multi-search`` (search.md §2): several searches in one request, separate or federated.

The whole request holds one search-queue slot, taken after validation; its queries then run
concurrently. No partial results: the failing query with the lowest position decides the error.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from sanic import Blueprint, HTTPResponse, Request, Sanic

from common.errors import ApiError
from gateway.auth.requests import access_of
from gateway.http.requests import json_body
from gateway.http.responses import json_response
from gateway.search.federation import federated_response
from gateway.search.multi import Query, QueryError, parse_multi_search
from gateway.search.params import page_window
from gateway.search.queue import search_slot
from gateway.search.response import search_response
from gateway.search.runner import IndexSearch, search_index

bp = Blueprint("multi_search")

T = TypeVar("T")


@bp.post("/multi-search", ctx_action="search")
async def multi_search(request: Request) -> HTTPResponse:
    started = time.perf_counter()
    search = parse_multi_search(json_body(request), access_of(request).restrict_search)
    app = request.app
    async with search_slot(app):
        if search.federation is None:
            results = await _each(search.queries, [_single(app, query) for query in search.queries])
            return json_response({"results": results})
        window = page_window(search.federation)
        wanted = window[0] + window[1]
        runs = [search_index(app, query.index_uid, query.params, wanted) for query in search.queries]
        found: list[IndexSearch] = await _each(search.queries, runs)
        return json_response(federated_response(search.queries, found, search.federation, started))


async def _single(app: Sanic, query: Query) -> dict[str, Any]:
    """One query of a non-federated multi-search: the single-search response, after its ``indexUid``."""
    started = time.perf_counter()
    window = page_window(query.params)
    found = await search_index(app, query.index_uid, query.params, window[0] + window[1])
    return {"indexUid": query.index_uid, **search_response(found, query.params, window, started)}


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
