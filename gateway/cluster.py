"""The gateway's view of the cluster: one gRPC channel per shard and one to the scheduler."""

from __future__ import annotations

import asyncio
import functools
import time
from typing import TYPE_CHECKING, Any

import grpc
import orjson

from common.errors import ApiError
from common.layout import DataLayout
from common.logging import get_logger
from common.partition import shard_of
from common.rpc import (
    health_pb2,
    json_pb2,
    operations_pb2_grpc,
    scheduler_pb2,
    scheduler_pb2_grpc,
    shard_pb2,
    shard_pb2_grpc,
)
from common.rpc.channels import aio_channel
from gateway.replication import task_headers
from gateway.search_stream import SearchStream, SearchStreamBroken

RESEND_WAIT = 30.0
"""Seconds a search caught by a shard's death waits for it to be back (a unary call's timeout)."""

SCHEDULER_WAIT = 10.0
"""Seconds a request waits for an unreachable scheduler before answering 503 ``scheduler_unavailable``:
the launcher and supervisord restart a dead one within a few seconds, and a client holding a request
for a minute is worse off than one told to retry."""

log = get_logger(__name__)

if TYPE_CHECKING:
    from gateway.metrics import GatewayMetrics


class Cluster:
    """Opened inside the server's event loop (gRPC aio channels are bound to a loop)."""

    def __init__(self, layout: DataLayout, shard_count: int) -> None:
        self._channels: list[grpc.aio.Channel] = [
            aio_channel(layout.shard_socket(k)) for k in range(shard_count)
        ]
        self._scheduler_channel = aio_channel(layout.scheduler_socket)
        self.shards = [shard_pb2_grpc.ShardStub(channel) for channel in self._channels]
        self.scheduler = scheduler_pb2_grpc.SchedulerStub(self._scheduler_channel)
        self._searches = [SearchStream(shard) for shard in self.shards]
        self.operations = [
            (name, operations_pb2_grpc.OperationsStub(channel))
            for name, channel in [("scheduler", self._scheduler_channel), *self._shard_channels()]
        ]
        """Every backend's ``Operations`` service (``/metrics``, ``/logs``), by process name."""
        self.metrics: GatewayMetrics | None = None
        """Where round trips are timed while the ``metrics`` feature is on."""

    def _shard_channels(self) -> list[tuple[str, grpc.aio.Channel]]:
        return [(f"shard-{k}", channel) for k, channel in enumerate(self._channels)]

    def _search_answered(self, peer: str, sent: float, _call: asyncio.Future[Any]) -> None:
        self._timed(peer, "Search", sent)

    def _timed(self, peer: str, method: str, sent: float) -> None:
        metrics = self.metrics
        if metrics is not None and metrics.active:
            metrics.round_trip_of(peer, method).observe(time.perf_counter() - sent)

    async def search(self, request: shard_pb2.SearchRequest) -> list[shard_pb2.SearchReply]:
        """Every shard at once: the fan-out cost is one round trip, not N. A search is read-only,
        so one whose stream broke (its shard died) is sent again on a new stream, which waits
        for the restarted shard, instead of failing."""
        try:
            return await self._search_once(request)
        except SearchStreamBroken:
            async with asyncio.timeout(RESEND_WAIT):
                return await self._search_once(request)

    async def _search_once(self, request: shard_pb2.SearchRequest) -> list[shard_pb2.SearchReply]:
        metrics = self.metrics
        if metrics is None or not metrics.active:
            return list(await asyncio.gather(*(stream.send(request) for stream in self._searches)))
        sent = time.perf_counter()
        calls = [stream.send(request) for stream in self._searches]
        for shard, call in enumerate(calls):
            call.add_done_callback(functools.partial(self._search_answered, f"shard-{shard}", sent))
        replies = list(await asyncio.gather(*calls))
        if any(reply.degraded for reply in replies):
            metrics.degraded.inc()
        return replies

    async def ask_scheduler(self, method: str, request: dict[str, Any]) -> Any:
        """Call a JSON-envelope rpc of the scheduler; a contract error in the reply is raised."""
        await self._scheduler_reachable()
        rpc = getattr(self.scheduler, method)
        sent = time.perf_counter()
        try:
            reply = await rpc(json_pb2.JsonRequest(json=orjson.dumps(request)), timeout=30)
        except grpc.aio.AioRpcError as error:
            raise _scheduler_lost(error) from None
        self._timed("scheduler", method, sent)
        return _unwrap(reply)

    async def _scheduler_reachable(self) -> None:
        """Waits up to ``SCHEDULER_WAIT`` for the scheduler's channel, so a request the scheduler never
        saw is told so (503, retry) rather than held until a deadline."""
        channel = self._scheduler_channel
        if channel.get_state(try_to_connect=True) == grpc.ChannelConnectivity.READY:
            return  # the common case, without a task for wait_for
        try:
            await asyncio.wait_for(channel.channel_ready(), SCHEDULER_WAIT)
        except TimeoutError:
            raise ApiError(
                "scheduler_unavailable",
                f"The task scheduler could not be reached for {SCHEDULER_WAIT:g} s, so the request was not "
                "passed on. Retry later.",
            ) from None

    async def register_task(
        self,
        task_type: str,
        index_uid: str | None,
        params: dict[str, Any],
        payload: bytes = b"",
        custom_metadata: str | None = None,
    ) -> Any:
        headers = task_headers.get()
        request = scheduler_pb2.RegisterTaskRequest(
            type=task_type,
            index_uid=index_uid or "",
            params_json=orjson.dumps(params),
            payload=payload,
            custom_metadata=custom_metadata,
            task_id=headers.task_uid(),
            dry_run=headers.is_dry_run(),
        )
        await self._scheduler_reachable()
        try:
            reply = await self.scheduler.RegisterTask(request, timeout=60)
        except grpc.aio.AioRpcError as error:
            # The scheduler may have enqueued the task before it died or stalled: a retry can add it twice.
            log.warning(
                "task registration outcome unknown",
                task_type=task_type,
                index_uid=index_uid,
                grpc_status=error.code().name,
                details=error.details(),
            )
            raise _scheduler_lost(error) from None
        return _unwrap(reply)

    async def ask_shards(self, method: str, request: dict[str, Any]) -> list[Any]:
        """The same JSON-envelope rpc on every shard, concurrently; replies in shard order."""
        message = json_pb2.JsonRequest(json=orjson.dumps(request))
        sent = time.perf_counter()
        replies = await asyncio.gather(
            *(getattr(shard, method)(message, wait_for_ready=True, timeout=30) for shard in self.shards)
        )
        self._timed("shards", method, sent)  # the slowest shard's
        return [_unwrap(reply) for reply in replies]

    async def get_document(self, index_uid: str, external_id: str, retrieve_vectors: bool = False) -> Any:
        """Only the owning shard is asked. With ``retrieve_vectors``: ``{"document", "embedders"}``, the
        document's ``_vectors`` holding every embedder's embeddings."""
        shard = self.shards[shard_of(external_id, len(self.shards))]
        query = {"index": index_uid, "id": external_id, "retrieveVectors": retrieve_vectors}
        request = json_pb2.JsonRequest(json=orjson.dumps(query))
        return _unwrap(await shard.GetDocument(request, wait_for_ready=True, timeout=30))

    async def ask_shard(self, key: str, method: str, request: dict[str, Any], timeout: float = 30) -> Any:
        """A JSON-envelope rpc of the shard ``key`` hashes to (a document id, a query text)."""
        shard = self.shards[shard_of(key, len(self.shards))]
        message = json_pb2.JsonRequest(json=orjson.dumps(request))
        return _unwrap(await getattr(shard, method)(message, wait_for_ready=True, timeout=timeout))

    async def healthy(self, timeout: float = 1.0) -> bool:
        request = health_pb2.HealthRequest()
        calls = [shard.Health(request, timeout=timeout) for shard in self.shards]
        calls.append(self.scheduler.Health(request, timeout=timeout))
        try:
            replies = await asyncio.gather(*calls)
        except grpc.aio.AioRpcError:
            return False
        return all(reply.status == "available" for reply in replies)

    async def close(self) -> None:
        await asyncio.gather(*(stream.close() for stream in self._searches))
        await asyncio.gather(*(channel.close() for channel in [*self._channels, self._scheduler_channel]))


def _scheduler_lost(error: grpc.aio.AioRpcError) -> ApiError:
    """The 503 of a call the scheduler took and did not answer (it died or stalled meanwhile)."""
    return ApiError(
        "scheduler_unavailable",
        f"The task scheduler did not answer ({error.code().name}); whether the request was registered "
        "is unknown: check the task list before retrying.",
    )


def _unwrap(reply: json_pb2.JsonReply) -> Any:
    if reply.error_json:
        error = orjson.loads(reply.error_json)
        raise ApiError(error["code"], error["message"])
    return orjson.loads(reply.json)
