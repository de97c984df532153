"""gRPC channel and server options shared by every process.

Bulk data (document payloads, hit lists) moves in large messages, so size limits are lifted; the
cluster lives on one host behind unix sockets, so proxies and retries only add latency.
"""

from __future__ import annotations

from pathlib import Path

import grpc

MESSAGE_OPTIONS: list[tuple[str, int]] = [
    ("grpc.max_send_message_length", -1),
    ("grpc.max_receive_message_length", -1),
]

CHANNEL_OPTIONS: list[tuple[str, int]] = [
    *MESSAGE_OPTIONS,
    ("grpc.enable_http_proxy", 0),
    ("grpc.enable_retries", 0),
    ("grpc.keepalive_time_ms", 60_000),
    # A restarted shard must be reachable again within a fraction of a second.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]

SERVER_OPTIONS: list[tuple[str, int]] = [
    *MESSAGE_OPTIONS,
    ("grpc.so_reuseport", 0),
]


def unix_target(socket: Path) -> str:
    return f"unix:{socket.absolute()}"


def aio_channel(socket: Path) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(unix_target(socket), options=CHANNEL_OPTIONS)


def aio_server(socket: Path) -> grpc.aio.Server:
    """A server bound to ``socket``; a stale socket file from a killed process is removed first."""
    socket.unlink(missing_ok=True)
    server = grpc.aio.server(options=SERVER_OPTIONS)
    server.add_insecure_port(unix_target(socket))
    return server
