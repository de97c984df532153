"""``kill -9`` during ``indexCompaction``: every shard ends with a valid store holding exactly the
applied batches, and the task succeeds once it is re-run after the restart (shard/index/compaction.py).

A shard is killed at chosen moments of its compaction, watched on disk: while it writes its copy
(``compaction/data.mdb`` exists), as soon as its store file changes (the copy took its place), and
at a random moment; the scheduler too, which then re-sends the in-flight compaction to shards that
may have finished it.
"""

from __future__ import annotations

import itertools
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.cluster import RunningCluster
from tests.support.crash.api import wait_task

INDEX = "compact_crash"
SEED = 20261127
_TRIES = 4
KILLS = [
    *itertools.product(("shard-0", "shard-1"), ("copying", "swapped", "random")),
    ("scheduler", "copying"),
    ("scheduler", "swapped"),
]


def _documents(round_: int, count: int) -> list[dict[str, Any]]:
    texts = (" ".join(f"t{(n * 7 + round_ * 13 + k) % 5000}" for k in range(60)) for n in range(count))
    return [{"id": n, "round": round_, "text": text} for n, text in enumerate(texts)]


def _state(client: httpx.Client) -> tuple[list[dict[str, Any]], list[Any]]:
    documents = client.get(f"/indexes/{INDEX}/documents", params={"limit": 100_000}).json()["results"]
    hits = client.post(f"/indexes/{INDEX}/search", json={"q": "t42 t7", "limit": 100}).json()["hits"]
    return sorted(documents, key=lambda d: d["id"]), [hit["id"] for hit in hits]


def _store_file(shard_dir: Path) -> tuple[int, int] | None:
    try:
        stat = (shard_dir / "data.mdb").stat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_size


def _kill_at(
    cluster: RunningCluster, client: httpx.Client, role: str, moment: str, task: int, delay: float
) -> str:
    """SIGKILL ``role`` when the watched shard (the victim, or shard 0) reaches ``moment`` of compaction
    ``task``; returns the moment actually hit ("over" when the task finished first).

    ``copying``: its copy exists; ``swapped``: the store file changed (another inode or size) since
    the copy began; ``random``: ``delay`` seconds after the copy began.
    """
    pid = cluster.child_pids()[role]
    shard_dir = cluster.layout.shard_dir(0 if role == "scheduler" else int(role[-1]))
    work = shard_dir / "compaction"
    began: tuple[int, int] | None = None
    started = 0.0
    hit = "over"
    for polls in itertools.count():
        if began is None and work.exists():
            began, started = _store_file(shard_dir), time.monotonic()
        if moment == "copying":
            reached = (work / "data.mdb").exists()
        elif moment == "swapped":
            reached = began is not None and _store_file(shard_dir) != began
        else:
            reached = began is not None and time.monotonic() - started >= delay
        if reached:
            hit = moment
            break
        if polls % 200 == 0 and client.get(f"/tasks/{task}").json()["status"] in ("succeeded", "failed"):
            break
        time.sleep(0.0001)
    os.kill(pid, signal.SIGKILL)
    cluster.wait_replaced(role, pid, timeout=60)
    return hit


def test_kill_9_during_compaction_loses_no_batch() -> None:
    rng = random.Random(SEED)
    with RunningCluster(shards=2) as cluster, httpx.Client(base_url=cluster.url, timeout=30.0) as client:
        for round_ in range(3):
            task = client.post(f"/indexes/{INDEX}/documents", json=_documents(round_, 6000)).json()
            assert wait_task(client, task["taskUid"], timeout=120)["status"] == "succeeded"
        timed = wait_task(client, client.post(f"/indexes/{INDEX}/compact").json()["taskUid"])
        assert timed["status"] == "succeeded", timed
        duration = float(timed["duration"].removeprefix("PT").removesuffix("S"))
        documents, hits = _state(client)
        missed = []
        attempts = itertools.count()
        for role, moment in KILLS:
            # Moments are watched on disk by polling, which a busy machine may miss: try again.
            for _ in range(_TRIES):
                attempt = next(attempts)
                # A write queued behind each compaction: applied exactly once whatever the kill.
                update = [{"id": attempt, "round": 100 + attempt}]
                written = client.put(f"/indexes/{INDEX}/documents", json=update).json()["taskUid"]
                compaction = client.post(f"/indexes/{INDEX}/compact").json()["taskUid"]
                hit = _kill_at(cluster, client, role, moment, compaction, rng.uniform(0, duration))
                done = wait_task(client, compaction)
                assert done["status"] == "succeeded", (role, hit, done)
                assert set(done["details"]) == {"preCompactionSize", "postCompactionSize"}
                assert wait_task(client, written)["status"] == "succeeded"
                documents[attempt]["round"] = 100 + attempt
                assert _state(client) == (documents, hits), f"attempt {attempt}: {role} killed while {hit}"
                assert not any((cluster.layout.shard_dir(k) / "compaction").exists() for k in range(2))
                if hit != "over":
                    break
            else:
                missed.append((role, moment))
        assert len(missed) <= 1, f"kills that never landed inside a compaction: {missed}"
