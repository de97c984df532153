"""The scheduler process: serves gRPC on its unix socket inside the data directory."""

from __future__ import annotations

import os

import grpc

from common.layout import DataLayout
from common.logging import get_logger
from common.process import wait_for_stop_signal
from common.rpc import health_pb2, scheduler_pb2_grpc
from common.rpc.channels import aio_server

log = get_logger(__name__)


class SchedulerService(scheduler_pb2_grpc.SchedulerServicer):
    async def Health(
        self, request: health_pb2.HealthRequest, context: grpc.aio.ServicerContext
    ) -> health_pb2.HealthReply:
        return health_pb2.HealthReply(process="scheduler", status="available", pid=os.getpid())


async def serve(layout: DataLayout) -> None:
    socket = layout.scheduler_socket
    layout.create()
    layout.scheduler_dir.mkdir(parents=True, exist_ok=True)
    server = aio_server(socket)
    scheduler_pb2_grpc.add_SchedulerServicer_to_server(SchedulerService(), server)
    await server.start()
    log.info("scheduler listening", socket=str(socket))
    await wait_for_stop_signal()
    await server.stop(grace=2)
    log.info("scheduler stopped")
