"""Request classes measured on a dataset loaded once and then configured (``geo``, ``docsort``,
``facets``).

Shared by the scenarios that differ only in their settings and request bodies: start a cluster, load
the dataset (``bench.search.ensure_loaded``), apply the settings, probe each distinct request once,
then drive every class through the closed-loop load generator; the report renders like ``search``'s.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.datasets import wait_for_task
from bench.procstat import cluster_processes
from bench.search import bench_cluster, ensure_loaded, measure_classes, post_requests, probe, resident_mib


@dataclass(frozen=True)
class Configured:
    """A scenario: its name and report line, its dataset and settings, the route its bodies go to."""

    name: str
    description: str
    dataset: str
    settings: dict[str, Any]
    route: str = "search"
    index_of: dict[str, str] = field(default_factory=dict)
    """The index a class sends its requests to, when not the dataset's."""
    prepare: Callable[[httpx.Client], dict[str, Any]] | None = None
    """Loads what those other indexes need, after the dataset is configured; reported under ``loaded``."""
    path_of: dict[str, str] = field(default_factory=dict)
    """The path a class sends its requests to, when not an index route (``/multi-search``)."""

    def index(self, name: str) -> str:
        return self.index_of.get(name, self.dataset)

    def path(self, name: str) -> str:
        return self.path_of.get(name) or f"/indexes/{self.index(name)}/{self.route}"


def parse_options(
    scenario: str, description: str, argv: list[str], concurrency: list[int], classes: tuple[str, ...]
) -> argparse.Namespace:
    """The options every such scenario takes; ``concurrency``: the default client counts; ``classes``:
    the scenario's request classes, all measured unless ``--classes`` picks some."""
    parser = argparse.ArgumentParser(prog=f"python -m bench.run {scenario}", description=description)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument(
        "--concurrency", type=lambda text: [int(p) for p in text.split(",")], default=concurrency
    )
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured per run and level")
    parser.add_argument("--runs", type=int, default=3, help="runs per class and level; tables show medians")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds before each run")
    parser.add_argument("--queries", type=int, default=100, help="distinct requests per class")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument(
        "--classes",
        type=lambda text: [name for name in text.split(",") if name in classes],
        default=list(classes),
        help="comma-separated subset of " + ", ".join(classes),
    )
    parser.add_argument("--data-dir", type=Path, help="keep the cluster's data here; reuse a loaded index")
    parser.add_argument(
        "--json", type=Path, help=f"result file; default bench/results/{scenario}-<time>.json"
    )
    return parser.parse_args(argv)


def run_classes(
    args: argparse.Namespace,
    environment: dict[str, Any],
    scenario: Configured,
    sets: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    """``sets``: request bodies per class, POSTed to ``/indexes/<index>/<route>``; only the classes of
    ``--classes`` are measured."""
    dataset, settings = scenario.dataset, scenario.settings
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    sets = {name: bodies for name, bodies in sets.items() if name in args.classes}
    requests = post_requests(sets, scenario.path)
    with bench_cluster(args, timeout=600.0) as (cluster, client):
        assert cluster.process is not None
        loaded = ensure_loaded(client, dataset, None, args.seed)
        started = time.monotonic()
        task = client.patch(f"/indexes/{dataset}/settings", json=settings).json()["taskUid"]
        wait_for_task(client, task, started + 1200)
        loaded["settings_s"] = round(time.monotonic() - started, 2)
        if scenario.prepare is not None:
            loaded["prepared"] = scenario.prepare(client)
        loaded["resident_mib"] = resident_mib(cluster_processes(cluster.process.pid))
        print("probing each distinct request once ...", file=sys.stderr, flush=True)
        probes = {name: probe(client, scenario.path(name), bodies) for name, bodies in sets.items()}
        classes = measure_classes(cluster, args, requests)
    return {
        "scenario": scenario.name,
        "description": scenario.description,
        "started_at": started_at,
        "options": {
            "dataset": dataset,
            **{
                key: getattr(args, key)
                for key in (
                    "seed", "shards", "concurrency", "duration", "runs", "warmup", "queries", "classes"
                )
            },
        },
        "environment": environment,
        "loaded": loaded,
        "probes": probes,
        "classes": classes,
        "profile": None,
        "query_samples": {name: bodies[:3] for name, bodies in sets.items()},
    }
