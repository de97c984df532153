"""``/indexes/{uid}/search`` (search.md §1): validate, fan out to every shard, merge the hits."""

from __future__ import annotations

import time
from typing import Any

import orjson
from sanic import Blueprint, HTTPResponse, Request

from common.rpc import shard_pb2
from gateway.http.requests import checked_index_uid, json_body, parse_query
from gateway.http.responses import json_response
from gateway.search.merge import merge_hits, response
from gateway.search.params import BODY, QUERY, page_window, refuse_pending

bp = Blueprint("search")


@bp.post("/indexes/<index_uid:str>/search")
async def search_with_post(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    return await _search(request, uid, BODY.validate(json_body(request)))


@bp.get("/indexes/<index_uid:str>/search")
async def search_with_get(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    return await _search(request, uid, parse_query(request, QUERY))


async def _search(request: Request, uid: str, params: dict[str, Any]) -> HTTPResponse:
    started = time.perf_counter()
    refuse_pending(params)
    window = page_window(params)
    offset, limit, _ = window
    shard_query = {"q": params.get("q"), "offset": 0, "limit": offset + limit}
    if params.get("attributesToRetrieve") is not None:
        shard_query["attributesToRetrieve"] = params["attributesToRetrieve"]
    cluster = request.app.ctx.cluster
    request_message = shard_pb2.SearchRequest(index_uid=uid, query_json=orjson.dumps(shard_query))
    replies = await cluster.search(request_message)
    if not any(reply.index_found for reply in replies):
        # Shards learn an index from its first document or settings; the catalog is the authority
        # (GetIndex answers index_not_found for a missing index).
        await cluster.ask_scheduler("GetIndex", {"uid": uid})
    hits = merge_hits(replies, offset, limit)
    total = sum(reply.candidates for reply in replies)
    return json_response(response(hits, params.get("q"), started, window, params, total))
