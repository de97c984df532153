"""``python -m bench.filterable``: time of ``filterableAttributes`` changes on ``cities`` (171k documents).

Loads the dataset once (or reuses ``--data-dir``), then applies a fixed sequence of settings updates and
prints each task's duration as the scheduler measured it (``startedAt`` to ``finishedAt``): adding
fields, adding one more, a features-only change, removing one. Facet data depends only on which fields
are faceted, so the cost of each step shows how much of it a change rebuilds.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from bench.datasets import wait_for_task
from bench.search import ensure_loaded
from tests.support.cluster import RunningCluster

INDEX = "cities"
COUNTRY_FEATURES = {"facetSearch": False, "filter": {"equality": True, "comparison": True}}
STEPS: list[tuple[str, list[Any]]] = [
    ("none", []),
    ("add country, admin1", ["country", "admin1"]),
    ("add admin2", ["country", "admin1", "admin2"]),
    (
        "features of country only",
        [{"attributePatterns": ["country"], "features": COUNTRY_FEATURES}, "admin1", "admin2"],
    ),
    ("remove admin2", [{"attributePatterns": ["country"], "features": COUNTRY_FEATURES}, "admin1"]),
]


def _seconds(task: dict[str, Any]) -> float:
    started, finished = (datetime.fromisoformat(task[key]) for key in ("startedAt", "finishedAt"))
    return (finished - started).total_seconds()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.filterable", description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="repetitions of the sequence; medians shown")
    parser.add_argument("--data-dir", type=Path, help="keep the cluster's data here; reuse a loaded index")
    args = parser.parse_args(argv)
    timings: dict[str, list[float]] = {name: [] for name, _ in STEPS}
    with (
        RunningCluster(shards=args.shards, data_dir=args.data_dir) as cluster,
        httpx.Client(base_url=cluster.url, timeout=300.0) as client,
    ):
        ensure_loaded(client, INDEX, None, 0)
        for run in range(1, args.runs + 1):
            for name, filterable in STEPS:
                print(f"run {run}/{args.runs}: {name} ...", file=sys.stderr, flush=True)
                response = client.put(f"/indexes/{INDEX}/settings/filterable-attributes", json=filterable)
                response.raise_for_status()
                task = wait_for_task(client, int(response.json()["taskUid"]), time.monotonic() + 3600)
                timings[name].append(_seconds(task))
    print(f"filterableAttributes changes on {INDEX}, {args.shards} shards, median of {args.runs} runs")
    for name, seconds in timings.items():
        ordered = sorted(seconds)
        runs = ", ".join(f"{value:.3f}" for value in seconds)
        print(f"{name:<28} {ordered[len(ordered) // 2]:>8.3f} s   runs: {runs}")


if __name__ == "__main__":
    main()
