"""``POST/DELETE /logs/stream`` and ``POST /logs/stderr`` (core.md §3.13), for every process.

A stream gathers the lines of the gateway itself and of each backend's ``Operations.StreamLogs``
(the scheduler and every shard filter and render their own, ``common/logging.py``) into one chunked
response, until the client leaves or ``DELETE /logs/stream``. One listener at a time, as the
reference. ``/logs/stderr`` sets the stderr filter of every process; a process restarted later starts
again from ``--log-level``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc
import orjson
from sanic import Blueprint, HTTPResponse, Request
from sanic.response import empty

from common.errors import ApiError
from common.log_filter import InvalidTarget, LogFilter
from common.logging import set_stderr_filter, start_stream
from common.operations import LineBuffer
from common.rpc import json_pb2, operations_pb2_grpc
from common.validation import Kind, Schema, Spec
from gateway.cluster import Cluster
from gateway.features import RuntimeFeatures
from gateway.http.requests import json_body

bp = Blueprint("logs")

LOGS_DISABLED = (
    "Modifying logs through the `/logs/*` routes requires enabling the `logs route` experimental feature. "
    "See https://github.com/orgs/meilisearch/discussions/721"
)
IN_USE = "The `/logs/stream` route is currently in use by someone else."
_RECONNECT_S = 0.5


def _target_problem(value: str) -> str | None:
    try:
        LogFilter.parse(value)
    except InvalidTarget as error:
        return str(error)
    return None


_TARGET = Spec(Kind.STRING, check=_target_problem)
_STREAM = Schema(
    {
        "target": _TARGET,
        "mode": Spec(Kind.STRING, choices=("human", "json", "profile")),
        "profileMemory": Spec(Kind.BOOLEAN),
    }
)
_STDERR = Schema({"target": _TARGET})


def _require_feature(request: Request) -> None:
    """After the body's checks, as the reference orders them."""
    features: RuntimeFeatures = request.app.ctx.features
    features.require("logsRoute", LOGS_DISABLED)


class LogStreams:
    """The one stream being listened to, if any."""

    def __init__(self) -> None:
        self._stop: asyncio.Event | None = None

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()

    @contextlib.asynccontextmanager
    async def claim(self) -> AsyncIterator[asyncio.Event]:
        """The stream's stop signal; ``bad_request`` while another listener holds it."""
        if self._stop is not None:
            raise ApiError("bad_request", IN_USE)
        stop = self._stop = asyncio.Event()
        try:
            yield stop
        finally:
            self._stop = None


async def _follow(stub: operations_pb2_grpc.OperationsStub, query: bytes, lines: LineBuffer) -> None:
    """A backend's lines, following it across restarts until the stream ends."""
    while True:
        try:
            async for message in stub.StreamLogs(json_pb2.JsonRequest(json=query), wait_for_ready=True):
                for line in message.lines:
                    lines.put(line)
        except grpc.aio.AioRpcError:
            pass
        await asyncio.sleep(_RECONNECT_S)


@bp.post("/logs/stream", ctx_action="metrics.get")
async def stream_logs(request: Request) -> None:
    body = _STREAM.validate(json_body(request))
    mode = body.get("mode", "human")
    if body.get("profileMemory") and mode != "profile":
        raise ApiError(
            "invalid_settings_typo_tolerance",
            "Invalid value: `profile_memory` can only be used while profiling code and is not compatible "
            f"with the {mode.capitalize()} mode.",
        )
    _require_feature(request)
    if mode == "profile":
        raise ApiError(
            "bad_request",
            "The `profile` mode of `/logs/stream` is not supported by Sift: use `human` or `json`.",
        )
    target = body.get("target", "info")
    streams: LogStreams = request.app.ctx.log_streams
    cluster: Cluster = request.app.ctx.cluster
    async with streams.claim() as stop:
        lines = LineBuffer(asyncio.get_running_loop())
        query = orjson.dumps({"target": target, "mode": mode})
        followers = [asyncio.create_task(_follow(stub, query, lines)) for _, stub in cluster.operations]
        stop_local = start_stream(LogFilter.parse(target), mode, lines.put)
        closing = asyncio.create_task(stop.wait())
        closing.add_done_callback(lambda _: lines.close())
        try:
            response = await request.respond(
                content_type="application/octet-stream", headers={"x-accel-buffering": "no"}
            )
            await response.send(b"")  # the headers now: Sanic holds them until the first chunk
            async for batch in lines.batches():
                await response.send(b"".join(line + b"\n" for line in batch))
            await response.eof()
        finally:
            stop_local()
            for task in (*followers, closing):
                task.cancel()


@bp.delete("/logs/stream", ctx_action="metrics.get")
async def stop_logs(request: Request) -> HTTPResponse:
    _require_feature(request)
    streams: LogStreams = request.app.ctx.log_streams
    streams.stop()
    return empty()


@bp.post("/logs/stderr", ctx_action="metrics.get")
async def stderr_logs(request: Request) -> HTTPResponse:
    body = _STDERR.validate(json_body(request))
    _require_feature(request)
    target = body.get("target", "info")
    set_stderr_filter(LogFilter.parse(target))
    cluster: Cluster = request.app.ctx.cluster
    query = json_pb2.JsonRequest(json=orjson.dumps({"target": target}))
    await asyncio.gather(
        *(stub.SetStderrLogs(query, wait_for_ready=True, timeout=10) for _, stub in cluster.operations)
    )
    return empty()
