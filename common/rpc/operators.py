"""The standard services operators' tools expect on a gRPC server, on every Sift server.

``grpc.health.v1.Health`` (what ``grpc_health_probe`` and orchestrators ask) and server reflection
(what ``grpcurl`` lists and calls services through), so both work on a shard's or the scheduler's
unix socket without the ``.proto`` files. Sift's own ``Health`` rpc stays: it also names the process
and its pid, which the launcher and the tests use.
"""

from __future__ import annotations

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection


class OperatorServices:
    """Health and reflection on ``server`` for the Sift services it serves (full names, e.g.
    ``sift.v1.Shard``); serving as soon as the server starts, not serving once it stops."""

    def __init__(self, server: grpc.aio.Server, *services: str) -> None:
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        health_name = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
        reflection.enable_server_reflection([*services, health_name, reflection.SERVICE_NAME], server)
        self.services = services

    async def serving(self) -> None:
        for name in self.services:
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    async def stopping(self) -> None:
        """Every service (and the server as a whole, ``""``) answers NOT_SERVING from now on."""
        await self.health.enter_graceful_shutdown()
