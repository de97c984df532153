"""``/indexes/{uid}/search`` (search.md §1): validate, fan out to every shard, merge the hits."""

from __future__ import annotations

from typing import Any

from sanic import Blueprint, HTTPResponse, Request

from common.timing import timed
from gateway.auth.requests import access_of
from gateway.http.requests import checked_index_uid, json_body, parse_query
from gateway.http.responses import json_response
from gateway.search.details import lookup_primary_keys, wants_metadata
from gateway.search.params import (
    BODY,
    QUERY,
    check_sort_syntax,
    from_query_string,
    select_search_kind,
)
from gateway.search.queue import search_slot
from gateway.search.single import run_search

bp = Blueprint("search")


@bp.post("/indexes/<index_uid:str>/search", ctx_action="search")
async def search_with_post(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    params = BODY.validate(json_body(request))
    return await _search(request, uid, access_of(request).restrict_search(uid, params))


@bp.get("/indexes/<index_uid:str>/search", ctx_action="search")
async def search_with_get(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    params = from_query_string(parse_query(request, QUERY))
    return await _search(request, uid, access_of(request).restrict_search(uid, params))


async def _search(request: Request, uid: str, params: dict[str, Any]) -> HTTPResponse:
    steps = timed(params.get("showPerformanceDetails"))
    async with search_slot(request.app):
        check_sort_syntax(params)
        params = select_search_kind(params)
        keys = lookup_primary_keys(request.app, [uid]) if wants_metadata(request) else None
        return json_response(await run_search(request.app, uid, params, steps, keys))
