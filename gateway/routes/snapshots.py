"""``POST /snapshots`` (core.md §3.9): enqueue a ``snapshotCreation`` task; the scheduler takes the
snapshot between batches (``scheduler/snapshots.py``). Body and query string are ignored, as the
reference ignores them; the task has no details (the key is omitted)."""

from __future__ import annotations

from sanic import Blueprint, HTTPResponse, Request

from gateway.http.responses import json_response

bp = Blueprint("snapshots")


@bp.post("/snapshots", ctx_action="snapshots.create")
async def create_snapshot(request: Request) -> HTTPResponse:
    task = await request.app.ctx.cluster.register_task("snapshotCreation", None, {})
    return json_response(task, status=202)
