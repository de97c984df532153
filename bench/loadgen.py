"""Closed-loop HTTP/1.1 load generator, run in its own process so that its CPU shows apart from the server's.

The machine has two cores shared with the server under test, so the client must cost as little as
possible: uvloop, one keep-alive connection per simulated client, requests encoded once up front, and a
response parser that reads only the status line and ``Content-Length``.

Run as ``python -m bench.loadgen``: it reads a ``LoadSpec`` as JSON on stdin and writes one JSON event
per line on stdout (``measuring`` and ``measured`` frame the measured window, then ``result``).
"""

from __future__ import annotations

import asyncio
import base64
import gc
import math
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Request:
    """One entry of a query set; ``headers`` come on top of ``Host`` and ``Content-Length``."""

    method: str
    path: str
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()

    def encode(self, host: str) -> bytes:
        lines = [f"{self.method} {self.path} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(self.body)}"]
        lines += [f"{name}: {value}" for name, value in self.headers]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + self.body


@dataclass(frozen=True)
class LoadSpec:
    host: str
    port: int
    concurrency: int
    warmup: float
    duration: float
    requests: tuple[Request, ...]

    def to_json(self) -> bytes:
        fields = asdict(self)
        fields["requests"] = [
            [r.method, r.path, base64.b64encode(r.body).decode(), list(r.headers)] for r in self.requests
        ]
        return orjson.dumps(fields)

    @classmethod
    def from_json(cls, data: bytes) -> LoadSpec:
        fields = orjson.loads(data)
        fields["requests"] = tuple(
            Request(method, path, base64.b64decode(body), tuple((k, v) for k, v in headers))
            for method, path, body, headers in fields["requests"]
        )
        return cls(**fields)


@dataclass(frozen=True)
class LoadResult:
    """Figures of one measured window; latencies in milliseconds."""

    concurrency: int
    seconds: float
    requests: int
    errors: int
    error_kinds: dict[str, int]
    rps: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float


class ProtocolError(Exception):
    """A response this parser does not handle (chunked body, garbled status line)."""


class _Window:
    """The measured interval, in ``perf_counter_ns`` time; only completions inside it count."""

    def __init__(self, warmup: float, duration: float) -> None:
        self.start = time.perf_counter_ns() + int(warmup * 1e9)
        self.end = self.start + int(duration * 1e9)
        self.latencies: list[int] = []
        self.errors: Counter[str] = Counter()

    def record(self, started: int, finished: int, status: int) -> None:
        if self.start <= finished <= self.end:
            self.latencies.append(finished - started)
            if not 200 <= status < 300:
                self.errors[str(status)] += 1

    def record_failure(self, kind: str) -> None:
        if self.start <= time.perf_counter_ns() <= self.end:
            self.errors[kind] += 1


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """Read one response; return its status and whether the server will close the connection."""
    head = await reader.readuntil(b"\r\n\r\n")
    if head[:5] != b"HTTP/" or len(head) < 12:
        raise ProtocolError(head[:40].decode("latin-1"))
    status = int(head[9:12])
    lowered = head.lower()
    length = 0
    at = lowered.find(b"\r\ncontent-length:")
    if at >= 0:
        length = int(head[at + 17 : lowered.index(b"\r\n", at + 2)])
    elif b"\r\ntransfer-encoding:" in lowered:
        raise ProtocolError("chunked responses are not supported")
    if length:
        await reader.readexactly(length)
    return status, b"\r\nconnection: close" in lowered


async def _client(first: int, payloads: list[bytes], host: str, port: int, window: _Window) -> None:
    """Send the next request as soon as the previous response is fully read, until the window ends."""
    turn = first
    while time.perf_counter_ns() < window.end:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError as error:
            window.record_failure(type(error).__name__)
            await asyncio.sleep(0.01)
            continue
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while (started := time.perf_counter_ns()) < window.end:
                writer.write(payloads[turn % len(payloads)])
                turn += 1
                status, closing = await _read_response(reader)
                window.record(started, time.perf_counter_ns(), status)
                if closing:
                    break
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ProtocolError) as error:
            window.record_failure(type(error).__name__)
        finally:
            writer.close()


def _percentile(ordered: list[int], percent: float) -> float:
    """Nearest-rank percentile of nanosecond samples, in milliseconds."""
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(percent / 100 * len(ordered)))
    return ordered[rank - 1] / 1e6


def _emit(event: str, **fields: Any) -> None:
    sys.stdout.buffer.write(orjson.dumps({"event": event, **fields}) + b"\n")
    sys.stdout.buffer.flush()


async def generate(spec: LoadSpec) -> LoadResult:
    host_header = f"{spec.host}:{spec.port}"
    payloads = [request.encode(host_header) for request in spec.requests]
    window = _Window(spec.warmup, spec.duration)
    clients = [
        asyncio.create_task(_client(k, payloads, spec.host, spec.port, window))
        for k in range(spec.concurrency)
    ]
    await asyncio.sleep(max(0.0, (window.start - time.perf_counter_ns()) / 1e9))
    _emit("measuring")
    await asyncio.sleep(max(0.0, (window.end - time.perf_counter_ns()) / 1e9))
    _emit("measured")
    await asyncio.gather(*clients)
    ordered = sorted(window.latencies)
    return LoadResult(
        concurrency=spec.concurrency,
        seconds=spec.duration,
        requests=len(ordered),
        errors=sum(window.errors.values()),
        error_kinds=dict(window.errors),
        rps=len(ordered) / spec.duration,
        p50_ms=_percentile(ordered, 50),
        p95_ms=_percentile(ordered, 95),
        p99_ms=_percentile(ordered, 99),
        max_ms=ordered[-1] / 1e6 if ordered else math.nan,
    )


class LoadProcess:
    """The parent's handle on a ``python -m bench.loadgen`` child running one spec."""

    def __init__(self, spec: LoadSpec) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.loadgen"],
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.process.stdin is not None
        self.process.stdin.write(spec.to_json())
        self.process.stdin.close()

    @property
    def pid(self) -> int:
        return self.process.pid

    def events(self) -> Iterator[dict[str, Any]]:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            yield orjson.loads(line)

    def close(self) -> int:
        """Stop the child if the parent gave up early; return its exit code."""
        if self.process.poll() is None:
            self.process.kill()
        return self.process.wait()


def main() -> None:
    import uvloop

    spec = LoadSpec.from_json(sys.stdin.buffer.read())
    # Collection pauses would show up as client-side latency; the loop allocates no cycles worth a pass.
    gc.disable()
    result = uvloop.run(generate(spec))
    _emit("result", result=asdict(result))


if __name__ == "__main__":
    main()
