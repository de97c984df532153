"""The scheduler's clients to the shards: partitioning and batch dispatch."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
import orjson

from common.layout import DataLayout
from common.logging import get_logger
from common.rpc import json_pb2, shard_pb2, shard_pb2_grpc
from common.rpc.channels import aio_channel

log = get_logger(__name__)
_TRANSIENT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
Reply = TypeVar("Reply")


@dataclass
class ShardReply:
    result: dict[str, Any]
    aborted: bool
    """Rolled back by ``abort`` (nothing written)."""
    prepared: bool
    """Held prepared, waiting for the commit."""


def encode(operations: list[list[dict[str, Any]]]) -> dict[int, bytes]:
    """Each shard's operations as ``ApplyBatch`` sends them, encoded once however often sent."""
    return {shard: orjson.dumps(ops) for shard, ops in enumerate(operations)}


class ShardClients:
    def __init__(self, layout: DataLayout, shard_count: int) -> None:
        self.count = shard_count
        self._channels = [aio_channel(layout.shard_socket(k)) for k in range(shard_count)]
        self._stubs = [shard_pb2_grpc.ShardStub(channel) for channel in self._channels]

    async def apply(
        self,
        batch_uid: int,
        operations: dict[int, bytes],
        answered: Callable[[int, dict[str, Any]], None] | None = None,
        *,
        prepare: bool = False,
        skip: Collection[int] = (),
        abortable: bool = False,
    ) -> dict[int, ShardReply]:
        """Send each shard (key) its operations (JSON); returns each one's reply. ``answered(shard,
        result)`` is called as each shard's answer arrives (the batch's progress). ``prepare``: phase
        one of ``scheduler/prepare.py`` (abortable by ``abort``), else the commit, or the batch in one
        phase (``abortable``: which ``abort`` may roll back); ``skip``: tasks left out."""

        async def one(shard: int, ops: bytes) -> tuple[int, ShardReply]:
            reply = await self._apply_one(shard, batch_uid, ops, prepare, skip, abortable or prepare)
            if answered is not None:
                answered(shard, reply.result)
            return shard, reply

        return dict(await asyncio.gather(*(one(shard, ops) for shard, ops in operations.items())))

    async def _apply_one(
        self,
        shard: int,
        batch_uid: int,
        operations: bytes,
        prepare: bool,
        skip: Collection[int],
        abortable: bool,
    ) -> ShardReply:
        """A shard that dies mid-call is restarted by the launcher: re-send the same batch until it answers.

        Re-sending is safe because a shard records each applied batch uid in the same transaction, and
        answers a prepare it holds with what it holds.
        """
        request = shard_pb2.ApplyBatchRequest(
            batch_uid=batch_uid,
            operations_json=operations,
            abortable=abortable,
            prepare=prepare,
            skip_tasks=sorted(skip),
        )
        stub = self._stubs[shard]
        reply = await _until_answered(functools.partial(stub.ApplyBatch, request, wait_for_ready=True), shard)
        return ShardReply(orjson.loads(reply.result_json or b"{}"), reply.aborted, reply.prepared)

    async def abort(self, batch_uid: int) -> None:
        request = shard_pb2.AbortBatchRequest(batch_uid=batch_uid)
        await asyncio.gather(
            *(stub.AbortBatch(request, timeout=5) for stub in self._stubs), return_exceptions=True
        )

    async def document_count(self, index_uid: str) -> int:
        request = json_pb2.JsonRequest(json=orjson.dumps({"index": index_uid}))
        replies = await asyncio.gather(*(stub.Stats(request, wait_for_ready=True) for stub in self._stubs))
        return sum(int(orjson.loads(reply.json)["numberOfDocuments"]) for reply in replies)

    async def first_invalid(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The error of the earliest inserted document any shard finds invalid (``CheckDocuments``)."""
        message = json_pb2.JsonRequest(json=orjson.dumps(request))
        replies = await asyncio.gather(
            *(
                _until_answered(functools.partial(stub.CheckDocuments, message, wait_for_ready=True), shard)
                for shard, stub in enumerate(self._stubs)
            )
        )
        found = [item for item in (orjson.loads(reply.json) for reply in replies) if item]
        return min(found, key=lambda item: item["sequence"])["error"] if found else None

    async def documents(
        self, shard: int, index_uid: str, offset: int, limit: int, primary_key: str | None
    ) -> list[tuple[int, dict[str, Any]]]:
        """One page of a shard's stored documents of an index, ``(sequence, document)`` in insertion
        order (``GetDocuments`` without filter nor sort), with ``retrieveVectors``: once shards keep
        embeddings apart from documents, they put them back in ``_vectors`` (by ``primary_key``)."""
        query = {
            "index": index_uid,
            "offset": offset,
            "limit": limit,
            "retrieveVectors": True,
            "primaryKey": primary_key,
        }
        message = json_pb2.JsonRequest(json=orjson.dumps(query))
        call = functools.partial(self._stubs[shard].GetDocuments, message, wait_for_ready=True)
        reply = await _until_answered(call, shard)
        return [(sequence, document) for sequence, _, document in orjson.loads(reply.json)["results"]]

    async def close(self) -> None:
        await asyncio.gather(*(channel.close() for channel in self._channels))


async def _until_answered(call: Callable[[], Awaitable[Reply]], shard: int) -> Reply:
    """A shard that dies mid-call is restarted by the launcher: call again until it answers (safe for
    batches because a shard records each applied batch uid, and for reads because they change nothing)."""
    delay = 0.05
    while True:
        try:
            return await call()
        except grpc.aio.AioRpcError as error:
            if error.code() not in _TRANSIENT:
                raise
            log.warning("shard unavailable, calling again", shard=shard)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
