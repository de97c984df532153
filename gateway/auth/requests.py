"""Where authorisation meets Sanic: each route declares its action when it is registered
(``ctx_action=``), and one request middleware authorises every request before anything else runs.
"""

from __future__ import annotations

from typing import Any

from sanic import Request, Sanic

from gateway.auth.access import Access
from gateway.auth.actions import PUBLIC, is_action
from gateway.auth.tenant import invalid_api_key


def require_route_actions(app: Sanic) -> None:
    """Refuse to start with a route that declares no action or an unknown one: no route is left open
    by omission."""
    for route in app.router.routes:
        action = getattr(route.ctx, "action", None)
        if action is None or not (action == PUBLIC or is_action(action)):
            raise RuntimeError(f"route {route.path} {sorted(route.methods)} declares no valid ctx_action")


def authorize_request(request: Request) -> None:
    """Authentication first (core.md §1.1): before the body is decoded, the path or query checked."""
    route = request.route
    if route is None:
        return
    index_uid = request.match_info.get("index_uid")
    header = request.headers.get("authorization")
    request.ctx.access = request.app.ctx.guard.authorize(route.ctx.action, index_uid, header)


def access_of(request: Request) -> Access:
    access: Access = request.ctx.access
    return access


def with_visibility(request: Request, query: dict[str, Any]) -> dict[str, Any]:
    """A scheduler list query narrowed to the indexes the request's key may see."""
    patterns = access_of(request).authorized_indexes()
    return query if patterns is None else {**query, "authorizedIndexes": patterns}


def require_indexes(request: Request, uids: list[str]) -> None:
    """Indexes named outside the path (a body): any the key may not touch is a plain 403."""
    access = access_of(request)
    if not all(access.allows(uid) for uid in uids):
        raise invalid_api_key()
