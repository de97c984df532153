"""``GET /health``: public, never needs a key."""

from __future__ import annotations

from sanic import Blueprint, HTTPResponse, Request

from gateway.auth.actions import PUBLIC
from gateway.http.responses import json_response

bp = Blueprint("health")


@bp.get("/health", ctx_action=PUBLIC)
async def health(_request: Request) -> HTTPResponse:
    return json_response({"status": "available"})
