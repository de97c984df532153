"""``POST /dumps`` (core.md §3.9): enqueue a ``dumpCreation`` task; the scheduler writes the file."""

from __future__ import annotations

from sanic import Blueprint, HTTPResponse, Request

from gateway.http.responses import json_response

bp = Blueprint("dumps")


@bp.post("/dumps", ctx_action="dumps.create")
async def create_dump(request: Request) -> HTTPResponse:
    """No body is read: the reference accepts the route with any or no content type."""
    params = {"details": {"dumpUid": None}}
    task = await request.app.ctx.cluster.register_task("dumpCreation", None, params)
    return json_response(task, status=202)
