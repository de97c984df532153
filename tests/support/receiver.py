"""A real HTTP receiver of webhook notifications on loopback, for the webhook tests and the bench.

It records every request (path with query string, headers, gunzipped body) and answers with the
statuses it is told, in turn (the last one repeats), after an optional delay.
"""

from __future__ import annotations

import gzip
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import orjson


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    """Header names lower-cased; a repeated header keeps its last value."""
    raw: bytes
    at: float
    status: int
    """What the receiver answered."""

    @property
    def tasks(self) -> list[dict[str, Any]]:
        """The NDJSON lines of the gunzipped body."""
        return [orjson.loads(line) for line in gzip.decompress(self.raw).splitlines()]


class Receiver:
    def __init__(self, statuses: Iterable[int] = (200,), delay: float = 0.0) -> None:
        self.statuses = list(statuses)
        self.delay = delay
        self.received: list[Received] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    status = receiver.statuses.pop(0) if len(receiver.statuses) > 1 else receiver.statuses[0]
                    headers = {name.lower(): value for name, value in self.headers.items()}
                    receiver.received.append(Received(self.path, headers, raw, time.monotonic(), status))
                if receiver.delay:
                    time.sleep(receiver.delay)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Received]:
        """The first ``count`` requests, once that many arrived."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.02)
        raise TimeoutError(f"{len(self.received)} of {count} notifications arrived: {self.received}")

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.shutdown()
        self.server.server_close()


class BlackHole:
    """A receiver that accepts connections and never answers: the worst dead receiver."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(1024)
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"

    def __enter__(self) -> BlackHole:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.socket.close()
