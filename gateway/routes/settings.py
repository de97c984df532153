"""``/indexes/{uid}/settings`` and its per-setting sub-routes (search.md §6).

Reads come from the scheduler's catalog, so they show a change only once its task succeeded. Writes are
validated here and enqueued as ``settingsUpdate`` tasks whose ``details`` are the submitted settings as
normalised (sorted sets, API keys masked); a reset sends ``null`` for what it resets, so
``DELETE /settings/stop-words`` has details ``{"stopWords": null}`` and ``DELETE /settings`` all 20 keys
``null``. Updates may create the index; resets never do (core.md §4.4).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from sanic import Blueprint, HTTPResponse, Request

from common.settings import (
    EXPERIMENTAL_SETTINGS,
    FOREIGN_KEYS,
    SUB_ROUTES,
    ExperimentalSetting,
    SettingsUpdate,
    SubRoute,
    feature_not_enabled,
    foreign_keys_not_enabled,
    reset_all,
    update_details,
    validate_setting,
    validate_settings,
)
from gateway.http.requests import checked_index_uid, json_body, query_args
from gateway.http.responses import json_response

bp = Blueprint("settings")
_SETTINGS = "/indexes/<index_uid:str>/settings"

Handler = Callable[..., Coroutine[Any, Any, HTTPResponse]]


async def _settings(request: Request, index_uid: str) -> dict[str, Any]:
    settings: dict[str, Any] = await request.app.ctx.cluster.ask_scheduler(
        "GetSettings", {"uid": checked_index_uid(index_uid)}
    )
    return settings


def _foreign_keys_enabled(request: Request) -> bool:
    return bool(request.app.ctx.features.enabled("foreignKeys"))


async def _enqueue(request: Request, uid: str, update: SettingsUpdate, *, creates: bool) -> HTTPResponse:
    """``customMetadata`` is honoured when given (the official clients send it), other parameters ignored.

    Giving ``foreignKeys`` a value needs its feature; resetting it (``null``, DELETE) never does."""
    if update.get(FOREIGN_KEYS.key) is not None and not _foreign_keys_enabled(request):
        raise foreign_keys_not_enabled()
    metadata = query_args(request).get("customMetadata")
    params = {"settings": update, "allowIndexCreation": creates, "details": update_details(update)}
    task = await request.app.ctx.cluster.register_task(
        "settingsUpdate", uid, params, b"", metadata[-1] if metadata else None
    )
    return json_response(task, status=202)


@bp.get(_SETTINGS, ctx_action="settings.get")
async def get_settings(request: Request, index_uid: str) -> HTTPResponse:
    """The 20 settings, and ``foreignKeys`` while its feature is on."""
    settings = await _settings(request, index_uid)
    if not _foreign_keys_enabled(request):
        del settings[FOREIGN_KEYS.key]
    return json_response(settings)


@bp.patch(_SETTINGS, ctx_action="settings.update")
async def update_settings(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    return await _enqueue(
        request, uid, validate_settings(json_body(request), request.app.ctx.features.enabled), creates=True
    )


@bp.delete(_SETTINGS, ctx_action="settings.update")
async def reset_settings(request: Request, index_uid: str) -> HTTPResponse:
    return await _enqueue(request, checked_index_uid(index_uid), reset_all(), creates=False)


def _sub_route_handlers(route: SubRoute) -> dict[str, Handler]:
    async def get_one(request: Request, index_uid: str) -> HTTPResponse:
        return json_response((await _settings(request, index_uid))[route.key])

    async def update_one(request: Request, index_uid: str) -> HTTPResponse:
        uid = checked_index_uid(index_uid)
        return await _enqueue(
            request,
            uid,
            validate_setting(route.key, json_body(request), request.app.ctx.features.enabled),
            creates=True,
        )

    async def reset_one(request: Request, index_uid: str) -> HTTPResponse:
        return await _enqueue(request, checked_index_uid(index_uid), {route.key: None}, creates=False)

    return {"GET": get_one, route.verb: update_one, "DELETE": reset_one}


def _experimental_handlers(setting: ExperimentalSetting) -> dict[str, Handler]:
    """Known routes of features Sift does not offer answer a clear error rather than a bare 404."""

    async def refuse(request: Request, index_uid: str) -> HTTPResponse:
        checked_index_uid(index_uid)
        raise feature_not_enabled(setting)

    return dict.fromkeys(("GET", setting.verb, "DELETE"), refuse)


def _register(path: str, handlers: dict[str, Handler]) -> None:
    for method, handler in handlers.items():
        name = f"{method.lower()}_{path.replace('-', '_')}"
        action = "settings.get" if method == "GET" else "settings.update"
        bp.add_route(handler, f"{_SETTINGS}/{path}", methods=[method], name=name, ctx_action=action)


for _route in (*SUB_ROUTES, FOREIGN_KEYS):
    _register(_route.path, _sub_route_handlers(_route))
for _setting in EXPERIMENTAL_SETTINGS:
    _register(_setting.path, _experimental_handlers(_setting))
