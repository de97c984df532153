"""``/webhooks`` and ``/webhooks/{uuid}`` (core.md §3.14): types checked here, stored by the scheduler.

The scheduler checks what depends on the stored webhooks (their number, a PATCH's merged headers)
and the record's rules, so that they are reported in the reference's order; this module checks the
body's shape and the path's UUID and shows records with their secrets masked.
"""

from __future__ import annotations

from typing import Any

from sanic import Blueprint, HTTPResponse, Request

from common.validation import Kind, Schema, Spec
from common.webhooks import SIGNING_SECRET, parse_webhook_uuid, public_webhook, webhook_not_found
from gateway.http.requests import json_body
from gateway.http.responses import empty_response, json_response

bp = Blueprint("webhooks")


def _secret_check(secret: str) -> str | None:
    return None if secret else "the signing secret must not be empty"


# A null header is accepted: a creation stores it empty, an update removes it (as the reference does).
_BODY = Schema(
    {
        "url": Spec(Kind.STRING, nullable=True, code="invalid_webhook_url"),
        "headers": Spec(
            Kind.OBJECT,
            nullable=True,
            code="invalid_webhook_headers",
            values=Spec(Kind.STRING, nullable=True),
        ),
        SIGNING_SECRET: Spec(Kind.STRING, nullable=True, check=_secret_check),
    },
    immutable={"uuid": "immutable_webhook_uuid", "isEditable": "immutable_webhook_is_editable"},
)


async def _ask(request: Request, method: str, payload: dict[str, Any]) -> Any:
    return await request.app.ctx.cluster.ask_scheduler(method, payload)


@bp.get("/webhooks", ctx_action="webhooks.get")
async def list_webhooks(request: Request) -> HTTPResponse:
    records = (await _ask(request, "ListWebhooks", {}))["results"]
    return json_response({"results": [public_webhook(record) for record in records]})


@bp.post("/webhooks", ctx_action="webhooks.create")
async def create_webhook(request: Request) -> HTTPResponse:
    body = _BODY.validate(json_body(request))
    return json_response(public_webhook(await _ask(request, "CreateWebhook", body)), status=201)


@bp.get("/webhooks/<uuid:str>", ctx_action="webhooks.get")
async def get_webhook(request: Request, uuid: str) -> HTTPResponse:
    wanted = parse_webhook_uuid(uuid)
    for record in (await _ask(request, "ListWebhooks", {}))["results"]:
        if record["uuid"] == wanted:
            return json_response(public_webhook(record))
    raise webhook_not_found(wanted)


@bp.patch("/webhooks/<uuid:str>", ctx_action="webhooks.update")
async def update_webhook(request: Request, uuid: str) -> HTTPResponse:
    wanted = parse_webhook_uuid(uuid)
    changes = _BODY.validate(json_body(request))
    return json_response(public_webhook(await _ask(request, "UpdateWebhook", {**changes, "uuid": wanted})))


@bp.delete("/webhooks/<uuid:str>", ctx_action="webhooks.delete")
async def delete_webhook(request: Request, uuid: str) -> HTTPResponse:
    await _ask(request, "DeleteWebhook", {"uuid": parse_webhook_uuid(uuid)})
    return empty_response(204)
