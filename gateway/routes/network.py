"""``/network`` (core.md §3.15, flag ``network``): the topology record, stored by the scheduler.

Sift runs on one host, so the record is kept and shown but drives nothing; what the reference's
community build refuses (a leader, ``POST /network/control``) is refused the same way, 451
``requires_enterprise_edition``. Bodies are validated before the flag is checked, as there.
"""

from __future__ import annotations

from sanic import Blueprint, HTTPResponse, Request

from common.errors import ApiError
from common.network import PATCH, check_patch
from common.validation import Kind, Schema, Spec
from gateway.features import RuntimeFeatures
from gateway.http.requests import json_body
from gateway.http.responses import json_response

bp = Blueprint("network")

_ORIGIN = Schema(
    {
        "remoteName": Spec(Kind.STRING, required=True),
        "taskUid": Spec(Kind.POSITIVE_INTEGER, required=True),
        "networkVersion": Spec(Kind.STRING),
    }
)
_CONTROL = Schema(
    {
        "origin": Spec(Kind.OBJECT, required=True, schema=_ORIGIN),
        "message": Spec(Kind.OBJECT, required=True, values=Spec(Kind.ANY)),
    }
)


def _require_network(request: Request, route: str) -> None:
    features: RuntimeFeatures = request.app.ctx.features
    features.require(
        "network",
        f"Using the {route} route requires enabling the `network` experimental feature. "
        "See https://github.com/orgs/meilisearch/discussions/805",
    )


@bp.get("/network", ctx_action="network.get")
async def get_network(request: Request) -> HTTPResponse:
    _require_network(request, "/network")
    return json_response(await request.app.ctx.cluster.ask_scheduler("GetNetwork", {}))


@bp.patch("/network", ctx_action="network.update")
async def update_network(request: Request) -> HTTPResponse:
    patch = PATCH.validate(json_body(request))
    _require_network(request, "/network")
    check_patch(patch)
    return json_response(await request.app.ctx.cluster.ask_scheduler("UpdateNetwork", patch))


@bp.post("/network/control", ctx_action="network.update")
async def control_network(request: Request) -> HTTPResponse:
    _CONTROL.validate(json_body(request))
    _require_network(request, "/network/control")
    raise ApiError(
        "requires_enterprise_edition", "Meilisearch Enterprise Edition is required to call this route"
    )
