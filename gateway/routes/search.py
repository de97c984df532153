"""``POST /indexes/{uid}/search``: fans the query out to every shard and merges the hits."""

from __future__ import annotations

import time

import orjson
from sanic import Blueprint, HTTPResponse, Request

from common.rpc import shard_pb2
from gateway.http.responses import json_response

bp = Blueprint("search")


@bp.post("/indexes/<index_uid:str>/search")
async def search(request: Request, index_uid: str) -> HTTPResponse:
    started = time.perf_counter()
    query = orjson.loads(request.body or b"{}")
    replies = await request.app.ctx.cluster.search(
        shard_pb2.SearchRequest(index_uid=index_uid, query_json=orjson.dumps(query))
    )
    hits = [hit for reply in replies for hit in orjson.loads(reply.hits_json)]
    return json_response(
        {
            "hits": hits,
            "query": query.get("q", ""),
            "processingTimeMs": int((time.perf_counter() - started) * 1000),
            "limit": 20,
            "offset": 0,
            "estimatedTotalHits": sum(reply.candidates for reply in replies),
        }
    )
