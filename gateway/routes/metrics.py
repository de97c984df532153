"""``GET /metrics`` (core.md §3.12): the cluster's Prometheus exposition (``gateway/metrics.py``)."""

from __future__ import annotations

from sanic import Blueprint, HTTPResponse, Request

from gateway.features import RuntimeFeatures
from gateway.metrics import GatewayMetrics

bp = Blueprint("metrics")

METRICS_DISABLED = (
    "Getting metrics requires enabling the `metrics` experimental feature. "
    "See https://github.com/meilisearch/product/discussions/625"
)


@bp.get("/metrics", ctx_action="metrics.get")
async def get_metrics(request: Request) -> HTTPResponse:
    features: RuntimeFeatures = request.app.ctx.features
    features.require("metrics", METRICS_DISABLED)
    metrics: GatewayMetrics = request.app.ctx.metrics
    body = await metrics.exposition(request.app.ctx.cluster.operations)
    return HTTPResponse(body, content_type="text/plain; version=0.0.4")
