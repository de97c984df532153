"""The scheduler's clients to the shards: partitioning and batch dispatch."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from common.layout import DataLayout
from common.rpc import json_pb2, shard_pb2, shard_pb2_grpc
from common.rpc.channels import aio_channel


class ShardClients:
    def __init__(self, layout: DataLayout, shard_count: int) -> None:
        self.count = shard_count
        self._channels = [aio_channel(layout.shard_socket(k)) for k in range(shard_count)]
        self._stubs = [shard_pb2_grpc.ShardStub(channel) for channel in self._channels]

    async def apply(
        self, batch_uid: int, operations: list[list[dict[str, Any]]], abortable: bool
    ) -> list[tuple[dict[str, Any], bool]]:
        """Send each shard its operations; returns (result, aborted) per shard.

        ``wait_for_ready`` makes a call wait for a restarting shard instead of failing the batch.
        """
        replies = await asyncio.gather(
            *(
                stub.ApplyBatch(
                    shard_pb2.ApplyBatchRequest(
                        batch_uid=batch_uid, operations_json=orjson.dumps(ops), abortable=abortable
                    ),
                    wait_for_ready=True,
                )
                for stub, ops in zip(self._stubs, operations, strict=True)
            )
        )
        return [(orjson.loads(reply.result_json or b"{}"), reply.aborted) for reply in replies]

    async def apply_to(self, shard: int, batch_uid: int, operations: list[dict[str, Any]]) -> dict[str, Any]:
        reply = await self._stubs[shard].ApplyBatch(
            shard_pb2.ApplyBatchRequest(batch_uid=batch_uid, operations_json=orjson.dumps(operations)),
            wait_for_ready=True,
        )
        return dict(orjson.loads(reply.result_json))

    async def abort(self, batch_uid: int) -> None:
        request = shard_pb2.AbortBatchRequest(batch_uid=batch_uid)
        await asyncio.gather(
            *(stub.AbortBatch(request, timeout=5) for stub in self._stubs), return_exceptions=True
        )

    async def document_count(self, index_uid: str) -> int:
        request = json_pb2.JsonRequest(json=orjson.dumps({"index": index_uid}))
        replies = await asyncio.gather(*(stub.Stats(request, wait_for_ready=True) for stub in self._stubs))
        return sum(int(orjson.loads(reply.json)["numberOfDocuments"]) for reply in replies)

    async def close(self) -> None:
        await asyncio.gather(*(channel.close() for channel in self._channels))
