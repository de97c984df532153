"""The shard worker process: serves gRPC on its unix socket inside the data directory."""

from __future__ import annotations

import os

import grpc
import orjson

from common.layout import DataLayout
from common.logging import get_logger
from common.process import wait_for_stop_signal
from common.rpc import health_pb2, shard_pb2, shard_pb2_grpc
from common.rpc.channels import aio_server

log = get_logger(__name__)


class ShardService(shard_pb2_grpc.ShardServicer):
    """gRPC face of one shard; the index work lives in the concern packages of ``shard``."""

    def __init__(self, shard_id: int) -> None:
        self.name = f"shard-{shard_id}"

    async def Health(
        self, request: health_pb2.HealthRequest, context: grpc.aio.ServicerContext
    ) -> health_pb2.HealthReply:
        return health_pb2.HealthReply(process=self.name, status="available", pid=os.getpid())

    async def Search(
        self, request: shard_pb2.SearchRequest, context: grpc.aio.ServicerContext
    ) -> shard_pb2.SearchReply:
        return shard_pb2.SearchReply(hits_json=orjson.dumps([]), candidates=0)


async def serve(layout: DataLayout, shard_id: int) -> None:
    socket = layout.shard_socket(shard_id)
    layout.create()
    layout.shard_dir(shard_id).mkdir(parents=True, exist_ok=True)
    server = aio_server(socket)
    shard_pb2_grpc.add_ShardServicer_to_server(ShardService(shard_id), server)
    await server.start()
    log.info("shard listening", socket=str(socket))
    await wait_for_stop_signal()
    await server.stop(grace=2)
    log.info("shard stopped")
