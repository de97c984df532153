"""Operators' gRPC tools on the shards' and the scheduler's unix sockets (``common/rpc/operators.py``).

The calls go through server reflection and a generic client, as ``grpcurl`` makes them: the services,
methods and message types come from the server, never from Sift's generated modules (a descriptor
pool of its own, messages built from the reflected descriptors, JSON with base64 ``bytes`` fields).
"""

from __future__ import annotations

import base64
import os
import signal
from pathlib import Path
from typing import Any

import grpc
import orjson
import pytest
from google.protobuf import descriptor_pool, json_format, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from common.rpc.channels import unix_target
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

HEALTH = "grpc.health.v1.Health"
REFLECTION = "grpc.reflection.v1alpha.ServerReflection"


def reflected_call(socket: Path, service: str, method: str, request: dict[str, Any]) -> dict[str, Any]:
    """``grpcurl -d <request> -unix <socket> <service>/<method>``: a unary call described by reflection."""
    with grpc.insecure_channel(unix_target(socket)) as channel:
        pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
        described = pool.FindServiceByName(service).FindMethodByName(method)
        request_type = message_factory.GetMessageClass(described.input_type)
        reply_type = message_factory.GetMessageClass(described.output_type)
        call = channel.unary_unary(
            f"/{service}/{method}",
            request_serializer=request_type.SerializeToString,
            response_deserializer=reply_type.FromString,
        )
        reply = call(json_format.ParseDict(request, request_type()), timeout=10)
        return dict(json_format.MessageToDict(reply))


def reflected_services(socket: Path) -> list[str]:
    """``grpcurl -unix <socket> list``."""
    with grpc.insecure_channel(unix_target(socket)) as channel:
        return list(ProtoReflectionDescriptorDatabase(channel).get_services())


def as_json_request(value: dict[str, Any]) -> dict[str, str]:
    """A ``JsonRequest`` as grpcurl takes it: its ``bytes`` field in base64."""
    return {"json": base64.b64encode(orjson.dumps(value)).decode()}


@pytest.fixture(scope="module")
def books(cluster: RunningCluster) -> RunningCluster:
    task = (
        client_for(cluster)
        .index("books")
        .add_documents([{"id": i, "title": f"book {i}"} for i in range(40)], primary_key="id")
    )
    assert wait_task(cluster, task.task_uid)["status"] == "succeeded"
    return cluster


def test_reflection_lists_each_servers_services(books: RunningCluster) -> None:
    assert sorted(reflected_services(books.layout.scheduler_socket)) == [
        HEALTH,
        REFLECTION,
        "sift.v1.Operations",
        "sift.v1.Scheduler",
    ]
    for k in range(2):
        assert sorted(reflected_services(books.layout.shard_socket(k))) == [
            HEALTH,
            REFLECTION,
            "sift.v1.Operations",
            "sift.v1.Shard",
        ]


def test_a_shards_stats_through_reflection(books: RunningCluster) -> None:
    counts = []
    for k in range(2):
        reply = reflected_call(
            books.layout.shard_socket(k), "sift.v1.Shard", "Stats", as_json_request({"index": "books"})
        )
        assert "errorJson" not in reply
        stats = orjson.loads(base64.b64decode(reply["json"]))
        assert stats["fieldDistribution"] == {
            "id": stats["numberOfDocuments"],
            "title": stats["numberOfDocuments"],
        }
        counts.append(stats["numberOfDocuments"])
    assert sum(counts) == 40 and all(counts)


def test_the_schedulers_task_listing_through_reflection(books: RunningCluster) -> None:
    reply = reflected_call(
        books.layout.scheduler_socket, "sift.v1.Scheduler", "ListTasks", as_json_request({"limit": 5})
    )
    listing = orjson.loads(base64.b64decode(reply["json"]))
    first = listing["results"][-1]
    assert first["type"] == "documentAdditionOrUpdate" and first["indexUid"] == "books"
    assert first["status"] == "succeeded" and first["details"]["indexedDocuments"] == 40


@pytest.mark.parametrize("server", ["scheduler", "shard-0", "shard-1"])
def test_the_standard_health_service(books: RunningCluster, server: str) -> None:
    """What ``grpc_health_probe -addr unix://<socket>`` asks: the server as a whole, and by service."""
    socket = (
        books.layout.scheduler_socket if server == "scheduler" else books.layout.shard_socket(int(server[-1]))
    )
    service = "sift.v1.Scheduler" if server == "scheduler" else "sift.v1.Shard"
    with grpc.insecure_channel(unix_target(socket)) as channel:
        probe = health_pb2_grpc.HealthStub(channel)
        for name in ("", service):
            reply = probe.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, name
        with pytest.raises(grpc.RpcError) as unknown:
            probe.Check(health_pb2.HealthCheckRequest(service="sift.v1.Nothing"), timeout=5)
        assert unknown.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("server", ["scheduler", "shard-1"])
def test_health_turns_not_serving_when_a_server_stops(books: RunningCluster, server: str) -> None:
    """What an orchestrator watching ``grpc.health.v1.Health/Watch`` sees on SIGTERM: NOT_SERVING for
    the server as a whole before the server stops (then the launcher restarts the process)."""
    socket = books.layout.scheduler_socket if server == "scheduler" else books.layout.shard_socket(1)
    pid = books.child_pids()[server]
    whole = health_pb2.HealthCheckRequest(service="")
    with grpc.insecure_channel(unix_target(socket)) as channel:
        watch = health_pb2_grpc.HealthStub(channel).Watch(whole, timeout=30)
        assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
        os.kill(pid, signal.SIGTERM)
        assert next(watch).status == health_pb2.HealthCheckResponse.NOT_SERVING
        watch.cancel()
    books.wait_replaced(server, pid)
    with grpc.insecure_channel(unix_target(socket)) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(whole, timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
