"""The gateway process: a Sanic app speaking the public HTTP API."""

from __future__ import annotations

import logging

from sanic import HTTPResponse, Request, Sanic

from common.config import Config
from common.layout import DataLayout
from common.logging import enabled, get_logger
from common.tls import server_context
from gateway.auth.actions import PUBLIC
from gateway.auth.guard import Guard
from gateway.auth.keyring import KeyRing
from gateway.auth.requests import authorize_request, require_route_actions
from gateway.cluster import Cluster
from gateway.features import RuntimeFeatures
from gateway.http import cors
from gateway.http.body import decode_body
from gateway.http.errors import handle_exception
from gateway.http.routing import PREFLIGHT_PATH, GatewayRouter
from gateway.metrics import GatewayMetrics, TimedRequest
from gateway.replication import keep_task_headers
from gateway.routes import (
    document_edition,
    documents,
    dumps,
    dynamic_search_rules,
    experimental,
    facet_search,
    fields,
    health,
    indexes,
    keys,
    logs,
    metrics,
    multi_search,
    network,
    preview,
    render,
    search,
    settings,
    similar,
    snapshots,
    stats,
    tasks,
    unsupported,
    version,
    webhooks,
)
from gateway.routes.logs import LogStreams
from gateway.search.personalize import Reranker
from gateway.search.queue import SearchQueue

log = get_logger(__name__)


def create_app(config: Config, name: str = "sift") -> Sanic:
    app = Sanic(name, router=GatewayRouter(), configure_logging=False, request_class=TimedRequest)
    app.config.REQUEST_MAX_SIZE = config.http_payload_size_limit
    app.config.NOISY_EXCEPTIONS = False
    app.ctx.config = config
    app.add_route(cors.preflight, PREFLIGHT_PATH, methods=["OPTIONS"], ctx_action=PUBLIC)
    app.ctx.search_queue = SearchQueue.from_config(config)
    app.ctx.keys = KeyRing(config.master_key)
    app.ctx.guard = Guard(config.master_key, app.ctx.keys)
    app.ctx.features = RuntimeFeatures(config)
    app.ctx.reranker = Reranker.from_config(config)
    app.ctx.metrics = GatewayMetrics(app.ctx.features, app.ctx.search_queue)
    if app.ctx.reranker is not None:
        app.ctx.reranker.counted = app.ctx.metrics.count_personalized
    app.ctx.log_streams = LogStreams()
    routes = (health, version, indexes, documents, settings, tasks, stats, search, facet_search, multi_search)
    for module in (
        *routes,
        fields,
        keys,
        experimental,
        render,
        network,
        dynamic_search_rules,
        document_edition,
        webhooks,
        dumps,
        snapshots,
        similar,
        metrics,
        logs,
        preview,
        unsupported,
    ):
        app.blueprint(module.bp)
    if config.env == "development":
        app.blueprint(preview.assets)
    require_route_actions(app)
    app.error_handler.add(Exception, handle_exception)
    app.on_request(authorize_request)
    if config.experimental_replication_parameters:
        app.on_request(keep_task_headers)
    app.on_request(_decode_request_body)
    app.on_response(cors.add_cors_headers)
    app.on_response(_record_response)

    @app.before_server_start
    async def connect(app: Sanic) -> None:
        app.ctx.cluster = Cluster(DataLayout(config.db_path), config.shards)
        app.ctx.cluster.metrics = app.ctx.metrics
        # The gateway is the only process that changes keys and features: loaded once here, kept current
        # after.
        app.ctx.keys.replace_all((await app.ctx.cluster.ask_scheduler("ListKeys", {}))["results"])
        app.ctx.features.replace(await app.ctx.cluster.ask_scheduler("GetFeatures", {}))

    @app.after_server_stop
    async def disconnect(app: Sanic) -> None:
        await app.ctx.cluster.close()
        if app.ctx.reranker is not None:
            await app.ctx.reranker.close()

    return app


def _record_response(request: Request, response: HTTPResponse) -> None:
    metrics: GatewayMetrics = request.app.ctx.metrics
    metrics.record_response(request, response)
    if enabled(logging.DEBUG):
        status = response.status
        log.debug("HTTP request", method=request.method, path=request.path, status=status)


def _decode_request_body(request: Request) -> None:
    if request.body:
        request.body = decode_body(
            request.body,
            request.headers.get("content-encoding"),
            request.app.ctx.config.http_payload_size_limit,
        )


def serve(config: Config) -> None:
    """Run the gateway in this process (the launcher supervises it; no Sanic worker manager)."""
    host, port = config.http_host_port()
    app = create_app(config)
    context = server_context(config)
    log.info("gateway listening", http_addr=config.http_addr, tls=context is not None)
    app.run(host=host, port=port, ssl=context, single_process=True, access_log=False, motd=False)
