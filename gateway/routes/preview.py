"""``GET /``: the search preview page in development, the JSON status otherwise.

The page is for people: a request whose ``Accept`` lists ``text/html`` (every browser's) gets it,
other clients keep the JSON status they had, so scripts probing ``/`` see no change. In production
``/`` always answers the status and the assets' blueprint is not registered, so their paths are unknown
routes (404, empty body), as core.md §1.1 says of a build without the dashboard.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from sanic import Blueprint, HTTPResponse, Request
from sanic.exceptions import InvalidHeader
from sanic.response import raw

from gateway import preview
from gateway.auth.actions import PUBLIC
from gateway.http.responses import json_response

bp = Blueprint("preview")
assets = Blueprint("preview_assets")

# The page only talks to the gateway that served it; nothing inline, nothing from elsewhere.
_PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@bp.get("/", ctx_action=PUBLIC)
async def root(request: Request) -> HTTPResponse:
    if request.app.ctx.config.env == "development" and _wants_html(request):
        return _file(preview.PAGE, "text/html; charset=utf-8", Vary="Accept")
    response = json_response({"status": "Sift is running"})
    if request.app.ctx.config.env == "development":
        response.headers["Vary"] = "Accept"
    return response


def _asset_route(name: str, content_type: str) -> Callable[[Request], Coroutine[Any, Any, HTTPResponse]]:
    async def asset(_request: Request) -> HTTPResponse:
        return _file(name, content_type)

    return asset


# One route per file: any other path under /preview is an unknown route, answered like any other.
for _name, _content_type in preview.ASSETS.items():
    assets.add_route(
        _asset_route(_name, _content_type),
        f"/preview/{_name}",
        methods=["GET"],
        name=f"preview_{_name.replace('.', '_')}",
        ctx_action=PUBLIC,
    )


def _wants_html(request: Request) -> bool:
    """``text/html`` named with a non-zero weight; ``*/*`` alone (curl, HTTP clients) keeps the JSON."""
    try:
        return any(media.mime == "text/html" and media.q > 0 for media in request.accept)
    except InvalidHeader:
        return False


def _file(name: str, content_type: str, **headers: str) -> HTTPResponse:
    return raw(preview.read(name), content_type=content_type, headers={**_PAGE_HEADERS, **headers})
