"""``deploy/supervisord.conf`` under a real supervisord: the four roles start without ``sift serve``,
a ``kill -9`` of a shard and of the scheduler is restarted with no acknowledged task lost, and
``supervisorctl stop all`` stops every process cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import meilisearch
import pytest

from tests.support.cluster import REPO_ROOT, RunningCluster
from tests.support.supervised import SupervisedCluster

PROGRAMS = ("sift-scheduler", "sift-shard-0", "sift-shard-1", "sift-gateway")


def _kill_and_wait_restart(cluster: SupervisedCluster, victim: str) -> None:
    old_pid = cluster.backend_pid(victim)
    assert old_pid is not None
    os.kill(old_pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while cluster.backend_pid(victim) in (None, old_pid):
        assert time.monotonic() < deadline, f"supervisord did not restart {victim}:\n" + "\n".join(
            cluster.output[-30:]
        )
        time.sleep(0.05)


def test_supervisord_restarts_killed_backends_and_stops_cleanly() -> None:
    with SupervisedCluster() as cluster:
        status = cluster.ctl("status")
        assert status.returncode == 0, status.stdout + status.stderr
        assert all(f"sift:{name}" in status.stdout for name in PROGRAMS), status.stdout
        assert status.stdout.count("RUNNING") == 4, status.stdout

        client = meilisearch.Client(cluster.url)
        books = client.index("books")
        acknowledged: list[int] = []
        expected: set[int] = set()

        def add(first: int) -> None:
            documents = [{"id": i, "title": f"book {i}"} for i in range(first, first + 50)]
            acknowledged.append(books.add_documents(documents, primary_key="id").task_uid)
            expected.update(d["id"] for d in documents)

        for round_, victim in enumerate(("shard-0", "scheduler")):
            for k in range(4):
                add(1000 * round_ + 50 * k)
            _kill_and_wait_restart(cluster, victim)
            if victim.startswith("shard"):
                add(1000 * round_ + 500)  # acknowledged while the shard is back but may still be loading
        cluster.wait_healthy()
        for uid in acknowledged:
            task = client.wait_for_task(uid, timeout_in_ms=60_000, interval_in_ms=20)
            assert task.status == "succeeded", task
        ids = {int(d.id) for d in books.get_documents({"limit": 10_000, "fields": ["id"]}).results}
        assert ids == expected
        hits = httpx.post(f"{cluster.url}/indexes/books/search", json={"q": "book 525"}).json()["hits"]
        assert hits[0]["id"] == 525

        stopped = cluster.ctl("stop", "all")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        status = cluster.ctl("status")
        assert status.stdout.count("STOPPED") == 4, status.stdout
        # supervisord logs how each stopped program exited: all on their own after SIGTERM.
        for name in PROGRAMS:
            assert any(f"stopped: {name} (exit status 0)" in line for line in cluster.output), (
                name,
                cluster.output[-40:],
            )
        for name in ("sift-shard-0", "sift-scheduler"):
            assert any(f"exited: {name} (terminated by SIGKILL" in line for line in cluster.output)


def _run_alone(role: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    """``sift <role>`` started on its own, as supervisord starts it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    env.update(SEARCH_DB_PATH=str(data_dir), SEARCH_SHARDS="2", PYTHONPATH=str(REPO_ROOT))
    return subprocess.run(
        [sys.executable, "-m", "sift.cli", *role.split()], env=env, capture_output=True, text=True, timeout=60
    )


def test_a_directory_run_by_supervisord_refuses_a_second_cluster() -> None:
    """A ``sift serve``, or a second scheduler or shard, on the same directory would run a second
    executor over the task queue, or a second writer on a shard's store."""
    with SupervisedCluster() as cluster:
        intruder = RunningCluster(data_dir=cluster.data_dir)
        refused = "is in use by Sift processes started without `sift serve`"
        try:
            with pytest.raises(RuntimeError, match=refused):
                intruder.start(timeout=30)
        finally:
            intruder.stop()  # a cluster that did start must not outlive the test
        for role in ("scheduler", "shard --id 1"):
            second = _run_alone(role, cluster.data_dir)
            assert second.returncode == 1, second.stderr
            name = role.replace(" --id ", "-")
            assert f"already has a running {name}" in second.stderr, second.stderr
        assert httpx.get(f"{cluster.url}/health").status_code == 200


def test_a_role_started_alone_is_refused_on_a_directory_run_by_sift_serve() -> None:
    with RunningCluster(shards=2) as running:
        assert running.process is not None
        alone = _run_alone("scheduler", running.data_dir)
        assert alone.returncode == 1, alone.stderr
        assert f"is in use by another Sift (launcher pid {running.process.pid})" in alone.stderr
