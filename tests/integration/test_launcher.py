"""``sift serve``: start, supervise and stop the real process tree."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

import httpx
import pytest

from common.process import is_running
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_clean_shutdown_stops_every_child_and_exits_zero(stop_signal: signal.Signals) -> None:
    running = RunningCluster(shards=2).start()
    try:
        children = running.child_pids()
        assert set(children) == {"gateway", "scheduler", "shard-0", "shard-1"}
        assert running.process is not None
        running.process.send_signal(stop_signal)
        assert running.process.wait(timeout=30) == 0
        deadline = time.monotonic() + 5
        while any(is_running(pid) for pid in children.values()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [name for name, pid in children.items() if is_running(pid)]
        assert not running.layout.shard_socket(0).exists() or running.backend_pid("shard-0") is None
    finally:
        running.stop()


@pytest.mark.parametrize("victim", ["shard-1", "scheduler", "gateway"])
def test_killed_child_is_restarted_within_ten_seconds(victim: str) -> None:
    with RunningCluster(shards=2) as running:
        wait_task(running, client_for(running).create_index("movies").task_uid)
        # A search first: the gateway's search stream to each shard is then open, and must be reopened.
        assert httpx.post(f"{running.url}/indexes/movies/search", json={"q": "before"}).status_code == 200
        old_pid = running.child_pids()[victim]
        os.kill(old_pid, signal.SIGKILL)
        killed_at = time.monotonic()
        while running.child_pids().get(victim) in (None, old_pid):
            assert time.monotonic() - killed_at < 10, f"{victim} was not restarted"
            time.sleep(0.05)
        running.wait_healthy(timeout=10 - (time.monotonic() - killed_at))
        assert time.monotonic() - killed_at < 10
        if victim != "gateway":
            assert running.backend_pid(victim) == running.child_pids()[victim]
        response = httpx.post(f"{running.url}/indexes/movies/search", json={"q": "back"})
        assert response.status_code == 200
        assert any(victim in line and "child died" in line for line in running.output)


def test_killing_the_launcher_takes_the_children_down() -> None:
    running = RunningCluster(shards=1).start()
    try:
        children = running.child_pids()
        assert running.process is not None
        running.process.kill()
        running.process.wait()
        deadline = time.monotonic() + 10
        while any(is_running(pid) for pid in children.values()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [name for name, pid in children.items() if is_running(pid)]
    finally:
        running.stop()


def test_child_that_cannot_start_fails_the_launch_with_its_reason() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        running = RunningCluster(shards=1)
        running.args[running.args.index("--http-addr") + 1] = f"127.0.0.1:{port}"
        with pytest.raises(RuntimeError):
            running.start(timeout=60)
        assert running.process is not None
        assert running.process.wait(timeout=30) != 0
        time.sleep(0.2)
        text = "\n".join(running.output)
        assert "the cluster could not start" in text
        assert "gateway exited with code" in text
        assert "address already in use" in text.lower()
        running.stop()


def test_a_second_sift_on_a_data_directory_in_use_is_refused() -> None:
    with RunningCluster(shards=1) as first:
        wait_task(first, client_for(first).create_index("kept").task_uid)
        second = RunningCluster(shards=1, data_dir=first.data_dir)
        started = time.monotonic()
        with pytest.raises(RuntimeError):
            second.start(timeout=30)
        assert second.process is not None
        assert second.process.wait(timeout=10) != 0
        assert time.monotonic() - started < 10  # refused at once: the first launcher is alive
        time.sleep(0.2)
        text = "\n".join(second.output)
        assert "the cluster could not start" in text
        assert f"The data directory `{first.data_dir}` is in use by another Sift" in text
        # The first cluster kept its sockets and its queue: it still writes and answers.
        first.wait_healthy(timeout=5)
        wait_task(first, client_for(first).create_index("after").task_uid)
        assert {index.uid for index in client_for(first).get_indexes()["results"]} == {"kept", "after"}
        second.stop()


def test_a_killed_sifts_data_directory_can_be_started_again_at_once() -> None:
    first = RunningCluster(shards=1).start()
    try:
        wait_task(first, client_for(first).create_index("kept").task_uid)
        assert first.process is not None
        first.process.kill()  # its children hold the lock until SIGTERM has stopped them
        first.process.wait()
        with RunningCluster(shards=1, data_dir=first.data_dir) as second:
            assert client_for(second).get_index("kept").uid == "kept"
    finally:
        first.stop()


def test_searches_running_while_a_shard_is_killed_wait_for_its_restart() -> None:
    """A search is read-only, so one caught by a shard's death is sent again once the shard is back,
    rather than answered with a 500 (the stream to the dead shard fails every search on it)."""
    with RunningCluster(shards=2) as running:
        client = client_for(running)
        added = client.index("books").add_documents([{"id": k, "t": f"word{k}"} for k in range(50)])
        wait_task(running, added.task_uid)
        statuses: list[int] = []
        stop = threading.Event()

        def search_in_a_loop() -> None:
            with httpx.Client(base_url=running.url, timeout=60) as http:
                while not stop.is_set():
                    statuses.append(http.post("/indexes/books/search", json={"q": "word1"}).status_code)

        searchers = [threading.Thread(target=search_in_a_loop) for _ in range(4)]
        for searcher in searchers:
            searcher.start()
        try:
            time.sleep(0.5)
            old_pid = running.kill_backend("shard-0")
            running.wait_replaced("shard-0", old_pid)
            time.sleep(0.5)
        finally:
            stop.set()
            for searcher in searchers:
                searcher.join()
        assert statuses and set(statuses) == {200}, {s: statuses.count(s) for s in set(statuses)}
