"""The reference engine (``../shared/reference/``), started by a benchmark for side-by-side runs.

The binary ships xz-compressed; it is unpacked into a temporary directory, started on a free loopback
port with its data there (or in a kept directory), and stopped when the context exits. Sift never
calls it: only benchmarks that compare answers do.
"""

from __future__ import annotations

import lzma
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.loadgen import REPO_ROOT
from tests.support.cluster import free_port

ARCHIVE = REPO_ROOT.parent / "shared" / "reference" / "meilisearch-1.50.0-linux-x86_64.xz"
_START_TIMEOUT = 60.0


@dataclass(frozen=True)
class Reference:
    """A started reference server: where it answers, its process (to sample) and its data directory."""

    url: str
    pid: int
    data_dir: Path


@contextmanager
def running_reference(
    archive: Path = ARCHIVE,
    data_dir: Path | None = None,
    options: Sequence[str] = (),
    timeout: float = _START_TIMEOUT,
) -> Iterator[str]:
    """The URL of a reference server running on ``data_dir`` (temporary when None), started with
    ``options`` besides its paths; ``timeout`` bounds the wait for ``/health`` (an import at launch
    comes first)."""
    with reference_server(archive, data_dir, options, timeout) as server:
        yield server.url


@contextmanager
def reference_server(
    archive: Path = ARCHIVE,
    data_dir: Path | None = None,
    options: Sequence[str] = (),
    timeout: float = _START_TIMEOUT,
) -> Iterator[Reference]:
    """``running_reference``, with the server's pid and data directory as well."""
    with tempfile.TemporaryDirectory(prefix="sift-reference-") as scratch:
        binary = Path(scratch) / "meilisearch"
        with lzma.open(archive) as packed, open(binary, "wb") as unpacked:
            shutil.copyfileobj(packed, unpacked)
        binary.chmod(0o755)
        url = f"http://127.0.0.1:{free_port()}"
        db_path = data_dir or Path(scratch) / "data.ms"
        command = [
            str(binary),
            "--db-path",
            str(db_path),
            "--http-addr",
            url.removeprefix("http://"),
            "--no-analytics",
            *options,
        ]
        log_path = Path(scratch) / "reference.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen(command, cwd=scratch, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_healthy(url, process, log_path, timeout)
            yield Reference(url, process.pid, db_path)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the reference exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the reference did not answer /health within {timeout:.0f} s")
