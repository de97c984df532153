"""Routes of the contract's route map that Sift does not serve (yet): each answers a contract-shaped error
saying so, never a silent 404 (api/README.md), and declares its API-key action like any route.

Experimental routes check their flag first, with the reference's message, so a client probing a
disabled feature sees what it would see there. The README's "Not supported" section lists the same
routes with the reason; a route that gets built moves out of this table.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from sanic import Blueprint, HTTPResponse, Request

from common.errors import ApiError
from gateway.features import RuntimeFeatures

bp = Blueprint("unsupported")


@dataclass(frozen=True)
class _Gate:
    """An experimental flag and the reference's message when it is off."""

    feature: str
    message: str


_CHAT_LINK = (
    "requires enabling the `chat completions` experimental feature. "
    "See https://github.com/orgs/meilisearch/discussions/835"
)
_CHATS = "chat completions need a hosted LLM and are not part of Sift's first release"
_EXPORT = "exporting to another engine is not part of Sift's first release"


@dataclass(frozen=True)
class UnsupportedRoute:
    method: str
    path: str
    action: str
    reason: str
    gate: _Gate | None = None


ROUTES = (
    UnsupportedRoute("POST", "/export", "export", _EXPORT),
    UnsupportedRoute(
        "GET", "/chats", "chats.get", _CHATS, _Gate("chatCompletions", f"listing the chats {_CHAT_LINK}")
    ),
    UnsupportedRoute(
        "GET",
        "/chats/<workspace:str>",
        "chats.get",
        _CHATS,
        _Gate("chatCompletions", f"displaying a chat {_CHAT_LINK}"),
    ),
    UnsupportedRoute(
        "DELETE",
        "/chats/<workspace:str>",
        "chats.delete",
        _CHATS,
        _Gate("chatCompletions", f"deleting a chat {_CHAT_LINK}"),
    ),
    *(
        UnsupportedRoute(
            method,
            "/chats/<workspace:str>/settings",
            action,
            _CHATS,
            _Gate("chatCompletions", f"using the /chats/settings route {_CHAT_LINK}"),
        )
        for method, action in (
            ("GET", "chatsSettings.get"),
            ("PATCH", "chatsSettings.update"),
            ("DELETE", "chatsSettings.update"),
        )
    ),
    UnsupportedRoute(
        "POST",
        "/chats/<workspace:str>/chat/completions",
        "chatCompletions",
        _CHATS,
        _Gate("chatCompletions", f"using the chat completions route {_CHAT_LINK}"),
    ),
)


def _handler(route: UnsupportedRoute) -> Callable[..., Coroutine[Any, Any, HTTPResponse]]:
    shown = route.path.replace("<index_uid:str>", "{indexUid}").replace("<uuid:str>", "{uuid}")
    shown = shown.replace("<workspace:str>", "{workspaceUid}")

    async def unsupported(request: Request, **_path: str) -> HTTPResponse:
        features: RuntimeFeatures = request.app.ctx.features
        if route.gate is not None:
            features.require(route.gate.feature, route.gate.message)
        raise ApiError(
            "bad_request", f"`{route.method} {shown}` is not supported yet by Sift: {route.reason}."
        )

    return unsupported


for _number, _route in enumerate(ROUTES):
    bp.add_route(
        _handler(_route),
        _route.path,
        methods=[_route.method],
        name=f"unsupported_{_number}",
        ctx_action=_route.action,
    )
