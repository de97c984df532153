"""``kill -9`` during a snapshot: no partial ``.snapshot`` is ever visible, and after the restart the task
re-runs and writes a complete file (``scheduler/snapshots.py``).

The victim is killed at moments watched on disk: the scheduler while the shards copy their stores
(the staging directory exists) and while it packs the file (the temporary file exists); a shard while
it copies its own store (its staging directory exists).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from common.snapshot_archive import unpack
from tests.support.cluster import RunningCluster
from tests.support.crash.api import wait_task

INDEX = "snap_crash"
NAME = "data.ms.snapshot"
MOMENTS = [("scheduler", "copying"), ("scheduler", "packing"), ("shard-0", "copying"), ("shard-1", "copying")]


def _documents(count: int) -> list[dict[str, Any]]:
    texts = (" ".join(f"w{(n * 7 + k * 13) % 9000}" for k in range(60)) for n in range(count))
    return [{"id": n, "text": text} for n, text in enumerate(texts)]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCluster]:
    snapshots = tmp_path_factory.mktemp("snapshots")
    with (
        RunningCluster("--snapshot-dir", str(snapshots)) as running,
        httpx.Client(base_url=running.url, timeout=60) as http,
    ):
        documents = _documents(20_000)
        for start in range(0, len(documents), 5_000):
            uid = http.post(f"/indexes/{INDEX}/documents", json=documents[start : start + 5_000]).json()
            assert wait_task(http, uid["taskUid"], timeout=300)["status"] == "succeeded"
        running.snapshot_dir = snapshots  # type: ignore[attr-defined]
        yield running


def _watched(snapshots: Path, role: str, moment: str) -> Path:
    staging = snapshots / f".{NAME}.staging"
    if moment == "packing":
        return snapshots / f".{NAME}.tmp"
    return staging if role == "scheduler" else staging / "shards" / role[-1]


@pytest.mark.parametrize(("role", "moment"), MOMENTS)
def test_kill_during_a_snapshot_leaves_no_partial_file(
    loaded: RunningCluster, tmp_path: Path, role: str, moment: str
) -> None:
    snapshots: Path = loaded.snapshot_dir  # type: ignore[attr-defined]
    (snapshots / NAME).unlink(missing_ok=True)
    watched = _watched(snapshots, role, moment)
    with httpx.Client(base_url=loaded.url, timeout=60) as http:
        pid = loaded.child_pids()[role]
        task_uid = http.post("/snapshots").json()["taskUid"]
        for polls in itertools.count():
            if watched.exists():
                break
            assert polls < 200_000, f"{watched} never appeared"
            time.sleep(0.0005)
        loaded.kill_backend(role)
        assert not (snapshots / NAME).exists(), "the snapshot was complete before the kill"
        loaded.wait_replaced(role, pid)
        task = wait_task(http, task_uid, timeout=120)
    assert task["status"] == "succeeded", task
    assert sorted(path.name for path in snapshots.iterdir()) == [NAME]  # no staging, no temporary file
    manifest = unpack(snapshots / NAME, tmp_path / "unpacked")
    assert manifest.shards == 2
    assert {"scheduler/data.mdb", "shards/0/data.mdb", "shards/1/data.mdb"} <= set(manifest.files)
