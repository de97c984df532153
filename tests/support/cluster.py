"""Start the real cluster (``sift serve``) on a free port with a temporary data directory."""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType

import grpc
import httpx

from common.layout import DataLayout
from common.rpc import health_pb2, scheduler_pb2_grpc, shard_pb2_grpc
from common.rpc.channels import unix_target

REPO_ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RunningCluster:
    """A ``sift serve`` process tree; use as a context manager so it always stops."""

    starter = "sift serve"
    """What :meth:`command` runs, as failures name it."""

    def __init__(
        self,
        *options: str,
        shards: int = 2,
        data_dir: Path | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """``tls``: the client side of a cluster started with ``--ssl-*`` options (its certificate
        authority, and a client certificate when one is required): ``url`` is then ``https``."""
        self._tmp = tempfile.TemporaryDirectory(prefix="sift-test-")
        self.workdir = cwd or Path(self._tmp.name)
        self.data_dir = data_dir or Path(self._tmp.name) / "data.ms"
        self.port = free_port()
        self._rebound = False
        self.tls = tls
        self.url = f"{'http' if tls is None else 'https'}://127.0.0.1:{self.port}"
        self.layout = DataLayout(self.data_dir)
        self.args = [
            "serve",
            "--db-path",
            str(self.data_dir),
            "--http-addr",
            f"127.0.0.1:{self.port}",
            "--shards",
            str(shards),
            *options,
        ]
        self.env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})}
        self.output: list[str] = []
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> RunningCluster:
        if self.process is not None and self.process.poll() is None:
            # A second launcher would orphan the first, which then outlives the tests.
            raise RuntimeError("this cluster is already running (`with` starts it)")
        self.process = subprocess.Popen(
            self.command(),
            cwd=self.workdir,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        threading.Thread(target=self._collect_output, daemon=True).start()
        try:
            self.wait_healthy(timeout)
        except RuntimeError as error:
            self.stop()
            chosen_here = f"127.0.0.1:{self.port}" in self.args
            if "Address already in use" not in str(error) or self._rebound or not chosen_here:
                raise
            # free_port() closes its probe before the gateway binds: another process may take the port
            # in between. Once, on a fresh port; a port the test set itself is left as it asked.
            self._rebound = True
            self._move_to(free_port())
            return self.start(timeout)
        except BaseException:
            # `with` never reaches __exit__ when __enter__ fails: stop the tree here, or it outlives the test.
            self.stop()
            raise
        return self

    def _move_to(self, port: int) -> None:
        self.args[self.args.index(f"127.0.0.1:{self.port}")] = f"127.0.0.1:{port}"
        self.url = self.url.replace(f":{self.port}", f":{port}")
        self.port = port

    def command(self) -> list[str]:
        """What starts the cluster: ``sift serve`` with this cluster's options."""
        return [sys.executable, "-m", "sift.cli", *self.args]

    def _collect_output(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line.decode("utf-8", "replace").rstrip("\n"))

    def wait_healthy(self, timeout: float = 30.0) -> float:
        """Seconds until ``GET /health`` answers 200 and every backend answers its gRPC health."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.starter} exited:\n" + "\n".join(self.output[-30:]))
            if self._http_ok() and all(self.backend_pid(name) for name in self.backend_names()):
                return time.monotonic() - started
            time.sleep(0.05)
        raise TimeoutError(f"cluster not healthy under {self.starter}:\n" + "\n".join(self.output[-30:]))

    def _http_ok(self) -> bool:
        try:
            return httpx.get(f"{self.url}/health", timeout=1, verify=self.tls or True).status_code == 200
        except httpx.HTTPError:
            return False

    def backend_names(self) -> list[str]:
        shard_count = int(self.args[self.args.index("--shards") + 1])
        return ["scheduler", *[f"shard-{k}" for k in range(shard_count)]]

    def backend_pid(self, name: str) -> int | None:
        """The pid a backend reports over gRPC, or None when it does not answer."""
        stub_type: type[scheduler_pb2_grpc.SchedulerStub] | type[shard_pb2_grpc.ShardStub]
        if name == "scheduler":
            target, stub_type = self.layout.scheduler_socket, scheduler_pb2_grpc.SchedulerStub
        else:
            target, stub_type = self.layout.shard_socket(int(name.split("-")[1])), shard_pb2_grpc.ShardStub
        if not target.exists():
            return None
        with grpc.insecure_channel(unix_target(target)) as channel:
            try:
                return int(stub_type(channel).Health(health_pb2.HealthRequest(), timeout=1).pid)
            except grpc.RpcError:
                return None

    def child_pids(self) -> dict[str, int]:
        """The launcher's live children by role (``gateway``, ``scheduler``, ``shard-K``)."""
        assert self.process is not None
        children: dict[str, int] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                cmdline = (stat.parent / "cmdline").read_bytes().split(b"\0")
            except (OSError, IndexError):
                continue
            if int(fields[1]) != self.process.pid or fields[0] == "Z":
                continue
            args = [a.decode() for a in cmdline if a]
            role = args[args.index("sift.cli") + 1] if "sift.cli" in args else "?"
            if role == "shard":
                role = f"shard-{args[args.index('--id') + 1]}"
            children[role] = int(stat.parent.name)
        return children

    def wait_replaced(self, role: str, old_pid: int, timeout: float = 30.0) -> None:
        """Until the launcher has restarted ``role`` (killed as ``old_pid``) and the cluster is healthy."""
        deadline = time.monotonic() + timeout
        while self.child_pids().get(role) in (None, old_pid):
            assert time.monotonic() < deadline, f"{role} was not restarted"
            time.sleep(0.05)
        self.wait_healthy()

    def kill_backend(self, name: str) -> int:
        pid = self.backend_pid(name)
        assert pid is not None, f"{name} is not running"
        os.kill(pid, signal.SIGKILL)
        return pid

    def stop(self, timeout: float = 60.0) -> int:
        """``timeout`` leaves room for the launcher's own bound (``STOP_TIMEOUT`` for the gateway,
        then again for the backends, each killed past it) on a loaded machine."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            tail = "\n".join(self.output[-30:])
            raise TimeoutError(f"{self.starter} did not stop in {timeout:.0f} s:\n{tail}") from None

    def __enter__(self) -> RunningCluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        self._tmp.cleanup()
