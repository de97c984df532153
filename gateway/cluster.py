"""The gateway's view of the cluster: one gRPC channel per shard and one to the scheduler."""

from __future__ import annotations

import asyncio

import grpc

from common.layout import DataLayout
from common.rpc import health_pb2, scheduler_pb2_grpc, shard_pb2, shard_pb2_grpc
from common.rpc.channels import aio_channel


class Cluster:
    """Opened inside the server's event loop (gRPC aio channels are bound to a loop)."""

    def __init__(self, layout: DataLayout, shard_count: int) -> None:
        self._channels: list[grpc.aio.Channel] = [
            aio_channel(layout.shard_socket(k)) for k in range(shard_count)
        ]
        self._scheduler_channel = aio_channel(layout.scheduler_socket)
        self.shards = [shard_pb2_grpc.ShardStub(channel) for channel in self._channels]
        self.scheduler = scheduler_pb2_grpc.SchedulerStub(self._scheduler_channel)

    async def search(self, request: shard_pb2.SearchRequest) -> list[shard_pb2.SearchReply]:
        """One concurrent call per shard: the fan-out cost is one round trip, not N."""
        return list(await asyncio.gather(*(shard.Search(request) for shard in self.shards)))

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
        await asyncio.gather(*(channel.close() for channel in [*self._channels, self._scheduler_channel]))
