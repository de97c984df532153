"""``python -m bench.compaction``: what ``POST /indexes/{uid}/compact`` gives back on ``movies-1688``.

A fresh cluster loads the movies, then rewrites every document ``--rounds`` times (each round a
partial update changing ``overview`` and ``popularity``, so postings, records and document blocks
are rewritten and LMDB leaves free pages behind), then compacts. Printed per run: the shards' store
files before and after (bytes on disk, and the task's details), and the task's duration; the last
line gives the medians over ``--runs`` fresh clusters.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import httpx

from bench.datasets import DATASETS
from tests.support.cluster import RunningCluster
from tests.support.crash.api import wait_task

INDEX = "movies"


def _store_bytes(cluster: RunningCluster, shards: int) -> int:
    return sum((cluster.layout.shard_dir(k) / "data.mdb").stat().st_size for k in range(shards))


def _seconds(duration: str) -> float:
    return float(duration.removeprefix("PT").removesuffix("S"))


def one_run(shards: int, rounds: int) -> dict[str, Any]:
    movies = list(DATASETS["movies"].documents())
    with RunningCluster(shards=shards) as cluster, httpx.Client(base_url=cluster.url, timeout=120) as client:
        loaded = client.post(f"/indexes/{INDEX}/documents", json=movies).json()["taskUid"]
        assert wait_task(client, loaded, timeout=600)["status"] == "succeeded"
        after_load = _store_bytes(cluster, shards)
        for round_ in range(rounds):
            updates = [
                {"id": m["id"], "overview": f"{m['overview']} (rewrite {round_})", "popularity": round_}
                for m in movies
            ]
            task = client.put(f"/indexes/{INDEX}/documents", json=updates).json()["taskUid"]
            assert wait_task(client, task, timeout=600)["status"] == "succeeded"
        before = _store_bytes(cluster, shards)
        started = time.monotonic()
        task = wait_task(client, client.post(f"/indexes/{INDEX}/compact").json()["taskUid"], timeout=600)
        elapsed = time.monotonic() - started
        assert task["status"] == "succeeded", task
        return {
            "after_load": after_load,
            "before": before,
            "after": _store_bytes(cluster, shards),
            "details": task["details"],
            "task_s": _seconds(task["duration"]),
            "request_to_done_s": elapsed,
        }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.compaction", description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5, help="full rewrites of the movies before compacting")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    runs = []
    for run in range(args.runs):
        result = one_run(args.shards, args.rounds)
        runs.append(result)
        print(
            f"run {run}: after load {result['after_load']:,} B, after {args.rounds} rewrites "
            f"{result['before']:,} B -> compacted {result['after']:,} B "
            f"({result['details']['preCompactionSize']} -> {result['details']['postCompactionSize']}); "
            f"task {result['task_s'] * 1000:.0f} ms"
        )
    before = statistics.median(r["before"] for r in runs)
    after = statistics.median(r["after"] for r in runs)
    task_ms = statistics.median(r["task_s"] for r in runs) * 1000
    summary = f"{before:,.0f} B -> {after:,.0f} B ({after / before:.1%}); {task_ms:.0f} ms"
    print(f"median of {args.runs}: {summary}")


if __name__ == "__main__":
    main()
