"""``sift serve``: start, watch and stop the whole cluster on one host.

Children are separate ``python -m sift.cli <role>`` processes that receive the effective
configuration as JSON in an environment variable, so options are parsed and validated once.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import grpc

from common.config import Config
from common.data_lock import DataDirectoryInUse, lock_data_directory
from common.layout import DataLayout
from common.logging import get_logger
from common.rpc import health_pb2, scheduler_pb2_grpc, shard_pb2_grpc
from common.rpc.channels import CHANNEL_OPTIONS, unix_target
from sift.imports import Importer, ImportFailed, run_launch_import
from sift.upgrade import check_data_format, upgraded

CLUSTER_CONFIG_ENV = "SIFT_CLUSTER_CONFIG"
LAUNCHER_PID_ENV = "SIFT_LAUNCHER_PID"
STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
_STABLE_AFTER = 30.0
_MAX_BACKOFF = 10.0

log = get_logger(__name__)


class StartupError(Exception):
    """A child could not start; the message says which and why."""


@dataclass
class Child:
    name: str
    argv: list[str]
    is_healthy: Callable[[], bool]
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    failures: int = 0
    restart_at: float | None = None
    output_tail: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=20))

    def exit_reason(self) -> str:
        assert self.process is not None
        code = self.process.returncode
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        tail = "\n".join(self.output_tail)
        return f"{self.name} {how}" + (f":\n{tail}" if tail else "")


class Launcher:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.layout = DataLayout(config.db_path)
        self._stopping = threading.Event()
        env = dict(os.environ)
        env[CLUSTER_CONFIG_ENV] = config.to_json()
        env[LAUNCHER_PID_ENV] = str(os.getpid())
        self._env = env
        self.backends = [
            Child("scheduler", ["scheduler"], self._grpc_healthy(scheduler_pb2_grpc.SchedulerStub, None)),
            *[
                Child(
                    f"shard-{k}", ["shard", "--id", str(k)], self._grpc_healthy(shard_pb2_grpc.ShardStub, k)
                )
                for k in range(config.shards)
            ],
        ]
        self.gateway = Child("gateway", ["gateway"], self._http_healthy)
        self._lock_fd: int | None = None
        """The data directory's lock, inherited by every child (``common/data_lock.py``)."""

    @property
    def children(self) -> list[Child]:
        return [*self.backends, self.gateway]

    def run(self) -> int:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self._stopping.set())
        try:
            run_launch_import(self.config, _launch_importers())
            self.layout.create()
            self._lock_fd = lock_data_directory(self.config.db_path)
            upgrading = check_data_format(self.config)
            self._start_and_wait(self.backends)
            if upgrading is not None:
                self._wait_for_upgrade(upgrading)
            self._start_and_wait([self.gateway])
        except (StartupError, DataDirectoryInUse, ImportFailed, ValueError, OSError) as error:
            self._stop_all()
            print(f"sift: the cluster could not start: {error}", file=sys.stderr)
            return 1
        if self._stopping.is_set():
            self._stop_all()
            return 0
        log.info(
            "Sift is running",
            http_addr=f"{self._scheme}://{self.config.http_addr}",
            db_path=str(self.config.db_path),
        )
        self._supervise()
        self._stop_all()
        log.info("Sift stopped")
        return 0

    @contextlib.contextmanager
    def running_backends(self) -> Iterator[None]:
        """The scheduler and shards alone, no gateway, until the block ends: what a launch import
        drives over gRPC while nothing else can reach the data directory."""
        self.layout.create()
        self._lock_fd = lock_data_directory(self.config.db_path)
        try:
            self._start_and_wait(self.backends)
            yield
        finally:
            self._stop_all()
            os.close(self._lock_fd)
            self._lock_fd = None

    def _start_and_wait(self, children: list[Child]) -> None:
        for child in children:
            self._spawn(child)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        pending = list(children)
        while pending and not self._stopping.is_set():
            for child in list(pending):
                assert child.process is not None
                if child.process.poll() is not None:
                    child.process.wait()
                    time.sleep(0.1)  # let the output reader drain the last lines
                    raise StartupError(child.exit_reason())
                if child.is_healthy():
                    pending.remove(child)
            if time.monotonic() > deadline:
                names = ", ".join(c.name for c in pending)
                raise StartupError(f"{names} did not become healthy within {STARTUP_TIMEOUT:.0f} s")
            time.sleep(0.05)

    def _wait_for_upgrade(self, found: int) -> None:
        """The gateway starts once the ``upgradeDatabase`` task is done, however long it takes."""
        log.info("upgrading the database in place", from_format=found)
        while not upgraded(self.layout) and not self._stopping.wait(0.1):
            for child in self.backends:
                assert child.process is not None
                if child.process.poll() is not None:
                    time.sleep(0.1)  # let the output reader drain the last lines
                    raise StartupError(f"during the database upgrade, {child.exit_reason()}")
        log.info("database upgraded")

    def _supervise(self) -> None:
        """Restart dead children with exponential backoff until asked to stop."""
        while not self._stopping.wait(0.1):
            now = time.monotonic()
            for child in self.children:
                assert child.process is not None
                if child.restart_at is not None:
                    if now >= child.restart_at:
                        child.restart_at = None
                        log.info("restarting child", child=child.name, attempt=child.failures)
                        self._spawn(child)
                    continue
                if child.process.poll() is None:
                    continue
                lived = now - child.started_at
                child.failures = 1 if lived > _STABLE_AFTER else child.failures + 1
                delay = min(0.1 * 2 ** (child.failures - 1), _MAX_BACKOFF)
                child.restart_at = now + delay
                log.warning("child died", reason=child.exit_reason(), restart_in_s=round(delay, 2))

    def _spawn(self, child: Child) -> None:
        child.output_tail.clear()
        assert self._lock_fd is not None, "children start once the data directory is locked"
        child.process = subprocess.Popen(
            [sys.executable, "-m", "sift.cli", *child.argv],
            pass_fds=(self._lock_fd,),
            env=self._env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        child.started_at = time.monotonic()
        threading.Thread(target=_forward_output, args=(child, child.process), daemon=True).start()

    def _stop_all(self) -> None:
        """Gateway first so no request reaches a stopping backend, then the backends together."""
        for group in ([self.gateway], self.backends):
            running = [c.process for c in group if c.process is not None and c.process.poll() is None]
            for process in running:
                process.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + STOP_TIMEOUT
            for process in running:
                try:
                    process.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    log.warning("child did not stop in time, killed", pid=process.pid, waited_s=STOP_TIMEOUT)
                    process.kill()
                    process.wait()

    def _grpc_healthy(
        self, stub_type: Callable[[grpc.Channel], object], shard_id: int | None
    ) -> Callable[[], bool]:
        socket = self.layout.scheduler_socket if shard_id is None else self.layout.shard_socket(shard_id)

        def check() -> bool:
            if not socket.exists():
                return False
            with grpc.insecure_channel(unix_target(socket), options=CHANNEL_OPTIONS) as channel:
                stub = stub_type(channel)
                try:
                    reply = stub.Health(health_pb2.HealthRequest(), timeout=0.5)  # type: ignore[attr-defined]
                except grpc.RpcError:
                    return False
            return bool(reply.status == "available")

        return check

    def _http_healthy(self) -> bool:
        host, port = self.config.http_host_port()
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        if self.config.ssl_require_auth:
            # Without a client certificate the launcher can only see that the gateway listens.
            try:
                with socket.create_connection((host, port), timeout=0.5):
                    return True
            except OSError:
                return False
        url = (
            f"{self._scheme}://[{host}]:{port}/health"
            if ":" in host
            else f"{self._scheme}://{host}:{port}/health"
        )
        try:
            with urllib.request.urlopen(url, timeout=0.5, context=_LIVENESS_TLS) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    @property
    def _scheme(self) -> str:
        return "https" if self.config.ssl_cert_path is not None else "http"


def _launch_importers() -> dict[str, Importer]:
    """Launch imports by kind (``dump``, ``snapshot``), run before anything starts (``sift/imports.py``)."""
    from sift.dump_import import import_dump
    from sift.snapshot_import import import_snapshot

    return {"dump": import_dump, "snapshot": import_snapshot}


def _liveness_tls() -> ssl.SSLContext:
    """The launcher checks that its own gateway answers, not who it is: no certificate verification."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


_LIVENESS_TLS = _liveness_tls()


def _forward_output(child: Child, process: subprocess.Popen[bytes]) -> None:
    """Copy a child's output to ours, keeping the last lines to explain a failure."""
    assert process.stdout is not None
    for raw_line in process.stdout:
        line = raw_line.decode("utf-8", "replace").rstrip("\n")
        child.output_tail.append(line)
        print(line, file=sys.stderr, flush=True)
