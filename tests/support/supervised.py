"""Run ``deploy/supervisord.conf`` as shipped, under a real supervisord, on a temporary data directory.

Only the site-specific values of the file are replaced (data directory, HTTP address, supervisord's
control socket); each must occur in the file, so a change of its shape fails the test instead of
silently testing something else.
"""

from __future__ import annotations

import os
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
from tests.support.cluster import REPO_ROOT, free_port

CONFIG = REPO_ROOT / "deploy" / "supervisord.conf"
SHIPPED_DATA_DIR = "/var/lib/sift/data.ms"
SHIPPED_HTTP_ADDR = "0.0.0.0:7700"
SHIPPED_CONTROL_SOCKET = "/tmp/sift-supervisor.sock"


class SupervisedCluster:
    """supervisord running the shipped configuration; use as a context manager so it always stops."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="sift-supervised-")
        root = Path(self._tmp.name)
        self.data_dir = root / "data.ms"
        self.layout = DataLayout(self.data_dir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = root / "supervisord.conf"
        text = CONFIG.read_text()
        for shipped, ours in (
            (SHIPPED_DATA_DIR, str(self.data_dir)),
            (SHIPPED_HTTP_ADDR, f"127.0.0.1:{self.port}"),
            (SHIPPED_CONTROL_SOCKET, str(root / "supervisor.sock")),
        ):
            assert shipped in text, f"{CONFIG} no longer mentions {shipped}"
            text = text.replace(shipped, ours)
        self.config.write_text(text)
        # `sift` and `supervisorctl` come from this virtualenv, as after `pip install .` in one.
        bin_dir = str(Path(sys.executable).parent)
        self.env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
        self.output: list[str] = []
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> SupervisedCluster:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "supervisor.supervisord", "-c", str(self.config)],
            cwd=self._tmp.name,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        threading.Thread(target=self._collect_output, daemon=True).start()
        try:
            self.wait_healthy(timeout)
        except BaseException:
            self.stop()  # `with` never reaches __exit__ when __enter__ fails
            raise
        return self

    def _collect_output(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line.decode("utf-8", "replace").rstrip("\n"))

    def ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``supervisorctl`` with this configuration."""
        return subprocess.run(
            [sys.executable, "-m", "supervisor.supervisorctl", "-c", str(self.config), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def backend_names(self) -> list[str]:
        return ["scheduler", "shard-0", "shard-1"]

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

    def wait_healthy(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError("supervisord exited:\n" + "\n".join(self.output[-30:]))
            if self._http_ok() and all(self.backend_pid(name) for name in self.backend_names()):
                return
            time.sleep(0.05)
        raise TimeoutError("cluster not healthy under supervisord:\n" + "\n".join(self.output[-40:]))

    def _http_ok(self) -> bool:
        try:
            return httpx.get(f"{self.url}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self, timeout: float = 60.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise

    def __enter__(self) -> SupervisedCluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        self._tmp.cleanup()
