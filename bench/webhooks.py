"""``python -m bench.webhooks``: task throughput with a webhook receiver that answers in 1 s, against none.

One cluster (loopback allowed by ``--experimental-allowed-ip-networks``, one task per batch with
``--experimental-max-number-of-batched-tasks 1``, so that every task is a batch and a notification
whatever the timing) runs ``--tasks`` one-document additions spread over 4 indexes. Runs alternate
between no webhook and a webhook whose receiver (a process of its own) answers every notification
after ``--delay`` seconds, each run on fresh indexes, so that the drift of a shared machine spreads
over both. Printed per run: tasks per second from the first request to the last task finished, and
the notifications received by then; then the medians. The slow receiver's backlog is dropped with
its webhook after each run.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.sharedctypes import Synchronized
from typing import Any

import httpx

from tests.support.cluster import RunningCluster
from tests.support.crash.api import wait_task
from tests.support.receiver import Receiver


def _serve(delay: float, url: Any, count: Synchronized[int]) -> None:
    with Receiver(delay=delay) as receiver:
        url.put(receiver.url)
        while True:
            count.value = len(receiver.received)
            time.sleep(0.01)


@contextmanager
def receiver_process(delay: float) -> Iterator[tuple[str, Synchronized[int]]]:
    """A receiver in a process of its own, so that it takes no CPU from the process sending tasks:
    its URL and how many notifications it has received."""
    urls: multiprocessing.Queue[str] = multiprocessing.Queue()
    count: Synchronized[int] = multiprocessing.Value("l", 0)  # type: ignore[assignment]
    process = multiprocessing.Process(target=_serve, args=(delay, urls, count), daemon=True)
    process.start()
    try:
        yield urls.get(timeout=10), count
    finally:
        process.kill()
        process.join()


def one_run(client: httpx.Client, prefix: str, tasks: int) -> dict[str, Any]:
    started = time.monotonic()
    uids = [
        client.post(f"/indexes/{prefix}-{i % 4}/documents", json=[{"id": i}]).json()["taskUid"]
        for i in range(tasks)
    ]
    first, last = (wait_task(client, uid, timeout=600) for uid in (uids[0], uids[-1]))
    elapsed = time.monotonic() - started
    return {"tasks_per_s": tasks / elapsed, "batches": last["batchUid"] - first["batchUid"] + 1}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.webhooks", description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind; medians are printed")
    parser.add_argument("--delay", type=float, default=1.0, help="seconds the receiver takes to answer")
    args = parser.parse_args()
    results: dict[str, list[dict[str, Any]]] = {"none": [], "slow": []}
    options = (
        "--experimental-allowed-ip-networks",
        "127.0.0.0/8",
        "--experimental-max-number-of-batched-tasks",
        "1",
    )
    with (
        receiver_process(args.delay) as (receiver_url, count),
        RunningCluster(*options, shards=args.shards) as cluster,
        httpx.Client(base_url=cluster.url, timeout=120) as client,
    ):
        for run in range(args.runs):
            for kind in ("none", "slow"):
                webhook = (
                    client.post("/webhooks", json={"url": receiver_url}).json() if kind == "slow" else None
                )
                received = count.value
                result = one_run(client, f"{kind}{run}", args.tasks)
                result["notified"] = count.value - received
                if webhook is not None:
                    client.delete(f"/webhooks/{webhook['uuid']}")
                    time.sleep(3)  # the backlog left is dropped before the next run
                results[kind].append(result)
                print(
                    f"run {run} {kind:>4}: {result['tasks_per_s']:.0f} tasks/s, {result['batches']} batches, "
                    f"{result['notified']} notifications received meanwhile",
                    flush=True,
                )
    none, slow = (statistics.median(r["tasks_per_s"] for r in results[kind]) for kind in ("none", "slow"))
    ratio = statistics.median(
        s["tasks_per_s"] / n["tasks_per_s"] for n, s in zip(*results.values(), strict=True)
    )
    print(
        f"median of {args.runs}: {none:.0f} tasks/s without a webhook, {slow:.0f} tasks/s with a receiver "
        f"answering in {args.delay:g} s (median ratio of a run's pair {ratio:.0%})"
    )


if __name__ == "__main__":
    main()
