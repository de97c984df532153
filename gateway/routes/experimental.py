"""``GET/PATCH /experimental-features`` (core.md §3.11): validated here, stored by the scheduler.

Reads are answered from the gateway's copy (``gateway/features.py``); a PATCH is committed by the
scheduler first and its reply then replaces the copy, so the copy never shows an unacknowledged change.
"""

from __future__ import annotations

from contextlib import suppress

import grpc
from sanic import Blueprint, HTTPResponse, Request

from common.features import FEATURES
from common.validation import Kind, Schema, Spec
from gateway.features import RuntimeFeatures
from gateway.http.requests import json_body
from gateway.http.responses import json_response

bp = Blueprint("experimental")

_PATCH = Schema({name: Spec(Kind.BOOLEAN, nullable=True) for name in FEATURES})


def _features(request: Request) -> RuntimeFeatures:
    features: RuntimeFeatures = request.app.ctx.features
    return features


@bp.get("/experimental-features", ctx_action="experimental.get")
async def get_features(request: Request) -> HTTPResponse:
    return json_response(_features(request).public())


@bp.patch("/experimental-features", ctx_action="experimental.update")
async def update_features(request: Request) -> HTTPResponse:
    changes = _PATCH.validate(json_body(request))
    features, cluster = _features(request), request.app.ctx.cluster
    async with features.updating:
        try:
            features.replace(await cluster.ask_scheduler("UpdateFeatures", changes))
        except grpc.aio.AioRpcError:
            # The reply may be lost after the commit: reload so the copy matches the store again.
            with suppress(grpc.aio.AioRpcError):
                features.replace(await cluster.ask_scheduler("GetFeatures", {}))
            raise
    return json_response(features.public())
