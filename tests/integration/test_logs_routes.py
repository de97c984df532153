"""``/logs/stream`` and ``/logs/stderr`` (core.md §3.13, issue 25) across every process of the cluster:
a stream read while a workload runs, its target filter and modes, one listener at a time, the end of a
stream (``DELETE`` or the client leaving), a stderr level change reaching the scheduler and shards.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.integration.search_support import assert_error
from tests.support.client import client_for, switch_features, wait_task
from tests.support.cluster import RunningCluster

DISABLED = (
    "Modifying logs through the `/logs/*` routes requires enabling the `logs route` experimental feature. "
    "See https://github.com/orgs/meilisearch/discussions/721"
)
IN_USE = "The `/logs/stream` route is currently in use by someone else."
PROCESSES = {"gateway", "scheduler", "shard-0", "shard-1"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster("--experimental-enable-logs-route", shards=2) as running:
        yield running


class Listener:
    """Reads ``POST /logs/stream`` on a thread, line by line, until the server ends the stream."""

    def __init__(self, cluster: RunningCluster, body: dict[str, Any]) -> None:
        self.lines: list[str] = []
        self.status: int | None = None
        self.headers: httpx.Headers | None = None
        self._client = httpx.Client(timeout=httpx.Timeout(5, read=60))
        self._started = threading.Event()
        self._left = False
        self._thread = threading.Thread(target=self._read, args=(cluster, body), daemon=True)
        self._thread.start()
        assert self._started.wait(10)

    def _read(self, cluster: RunningCluster, body: dict[str, Any]) -> None:
        try:
            with self._client.stream("POST", f"{cluster.url}/logs/stream", json=body) as response:
                self.status, self.headers = response.status_code, response.headers
                self._started.set()
                for line in response.iter_lines():
                    self.lines.append(line)
        except httpx.ReadError:
            if not self._left:
                raise

    def wait_for(self, found: Any, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not found(self.lines):
            assert time.monotonic() < deadline, self.lines[-20:]
            time.sleep(0.05)

    def ended(self, timeout: float = 10) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def leave(self) -> None:
        self._left = True
        self._client.close()


def _workload(cluster: RunningCluster, uid: str) -> None:
    client = client_for(cluster)
    task = client.index(uid).add_documents([{"id": k, "title": f"log line {k}"} for k in range(10)])
    wait_task(cluster, task.task_uid)
    client.index(uid).search("line")


def _stop(cluster: RunningCluster) -> None:
    assert httpx.delete(f"{cluster.url}/logs/stream").status_code == 204


def test_json_stream_gathers_every_process_until_deleted(cluster: RunningCluster) -> None:
    listener = Listener(cluster, {"target": "debug", "mode": "json"})
    try:
        assert listener.status == 200
        assert listener.headers is not None and listener.headers["x-accel-buffering"] == "no"
        assert_error(httpx.post(f"{cluster.url}/logs/stream", json={}), "bad_request", IN_USE)
        _workload(cluster, "json_stream")

        def every_process(lines: list[str]) -> bool:
            return {orjson.loads(line)["process"] for line in lines if line} >= PROCESSES

        listener.wait_for(every_process)
        records = [orjson.loads(line) for line in listener.lines if line]
        assert all({"timestamp", "level", "fields", "target", "process"} <= set(r) for r in records)
        events = {(r["process"], r["fields"]["message"]) for r in records}
        assert ("scheduler", "batch processed") in events
        assert {("shard-0", "batch applied"), ("shard-1", "batch applied")} <= events
        assert ("gateway", "HTTP request") in events
        assert {r["level"] for r in records} <= {"DEBUG", "INFO", "WARNING", "ERROR"}
    finally:
        _stop(cluster)
    assert listener.ended()


def test_target_filter_and_human_mode(cluster: RunningCluster) -> None:
    listener = Listener(cluster, {"target": "scheduler=info,shard::server=off"})
    try:
        _workload(cluster, "human_stream")
        listener.wait_for(lambda lines: any("batch processed" in line for line in lines))
        _workload(cluster, "human_stream")  # shards' debug lines would have come by now
        lines = [line for line in listener.lines if line]
        assert all("process=scheduler" in line and "[debug" not in line for line in lines), lines
    finally:
        _stop(cluster)
    assert listener.ended()


def test_a_client_leaving_frees_the_stream(cluster: RunningCluster) -> None:
    first = Listener(cluster, {"target": "info"})
    first.leave()
    deadline = time.monotonic() + 30
    while True:  # the gateway notices at its next write, as the reference does
        _workload(cluster, "left_stream")
        second = Listener(cluster, {"target": "info"})
        if second.status == 200:
            break
        assert time.monotonic() < deadline, "the stream stayed in use after its client left"
    _stop(cluster)
    assert second.ended()


def test_a_stream_follows_a_restarted_shard(cluster: RunningCluster) -> None:
    listener = Listener(cluster, {"target": "shard=debug", "mode": "json"})
    try:
        old = cluster.kill_backend("shard-1")
        cluster.wait_replaced("shard-1", old)
        started = len(listener.lines)

        def from_the_new_shard() -> bool:
            records = [orjson.loads(line) for line in listener.lines[started:] if line]
            return any(
                r["process"] == "shard-1" and r["fields"]["message"] == "batch applied" for r in records
            )

        # The gateway reattaches within a second or so: what the shard logs before is not streamed.
        deadline = time.monotonic() + 30
        while not from_the_new_shard():
            assert time.monotonic() < deadline, listener.lines[started:]
            _workload(cluster, "restarted_stream")
            time.sleep(0.5)
    finally:
        _stop(cluster)
    assert listener.ended()


def test_stderr_level_change_reaches_scheduler_and_shards(cluster: RunningCluster) -> None:
    def debug_lines(since: int, process: str) -> list[str]:
        return [line for line in cluster.output[since:] if "[debug" in line and f"process={process}" in line]

    before = len(cluster.output)
    _workload(cluster, "stderr_info")
    time.sleep(0.5)
    assert not any(debug_lines(before, p) for p in PROCESSES)
    response = httpx.post(f"{cluster.url}/logs/stderr", json={"target": "debug"})
    assert response.status_code == 204, response.text
    try:
        changed = len(cluster.output)
        _workload(cluster, "stderr_debug")
        deadline = time.monotonic() + 10
        while not all(debug_lines(changed, p) for p in PROCESSES):
            assert time.monotonic() < deadline, cluster.output[changed:]
            time.sleep(0.1)
    finally:
        assert httpx.post(f"{cluster.url}/logs/stderr", json={}).status_code == 204
    time.sleep(0.5)
    back = len(cluster.output)
    _workload(cluster, "stderr_back")
    time.sleep(0.5)
    assert not any(debug_lines(back, p) for p in PROCESSES)


@pytest.mark.parametrize(
    ("path", "body", "code", "message"),
    [
        (
            "/logs/stream",
            {"target": ""},
            "bad_request",
            "Invalid value at `.target`: Empty string is not a valid target. If you want to get no logs use "
            "`OFF`. Usage: `info`, `meilisearch=info`, or you can write multiple filters in one target: "
            "`index_scheduler=info,milli=trace`",
        ),
        (
            "/logs/stderr",
            {"target": "a=b=c"},
            "bad_request",
            "Invalid value at `.target`: invalid filter directive: too many '=' in filter directive, "
            "expected 0 or 1",
        ),
        (
            "/logs/stream",
            {"target": "foo=blah"},
            "bad_request",
            'Invalid value at `.target`: error parsing level filter: expected one of "off", "error", '
            '"warn", "info", "debug", "trace", or a number 0-5',
        ),
        (
            "/logs/stream",
            {"mode": "tamo"},
            "bad_request",
            "Unknown value `tamo` at `.mode`: expected one of `human`, `json`, `profile`",
        ),
        (
            "/logs/stream",
            {"mode": "json", "profileMemory": True},
            "invalid_settings_typo_tolerance",
            "Invalid value: `profile_memory` can only be used while profiling code and is not compatible "
            "with the Json mode.",
        ),
        (
            "/logs/stream",
            {"x": 1},
            "bad_request",
            "Unknown field `x`: expected one of `target`, `mode`, `profileMemory`",
        ),
        ("/logs/stderr", {"mode": "json"}, "bad_request", "Unknown field `mode`: expected one of `target`"),
    ],
)
def test_invalid_bodies(
    cluster: RunningCluster, path: str, body: dict[str, Any], code: str, message: str
) -> None:
    assert_error(httpx.post(f"{cluster.url}{path}", json=body), code, message)


def test_disabled_routes_answer_the_reference_error() -> None:
    with RunningCluster(shards=1) as running:
        for method, path in (("POST", "/logs/stream"), ("DELETE", "/logs/stream"), ("POST", "/logs/stderr")):
            response = httpx.request(method, f"{running.url}{path}", json={} if method == "POST" else None)
            assert_error(response, "feature_not_enabled", DISABLED)
        # The body is checked first, as the reference does.
        assert_error(
            httpx.post(f"{running.url}/logs/stderr", json={"x": 1}), "bad_request", prefix="Unknown field"
        )
        switch_features(running, logsRoute=True)
        assert httpx.post(f"{running.url}/logs/stderr", json={"target": "info"}).status_code == 204
