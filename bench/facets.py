"""``python -m bench.run facets``: facet distribution latency on ``cities`` (171k documents).

The dataset is loaded once with ``country``, ``admin1`` and ``admin2`` filterable, then each request
class is driven through the closed-loop load generator at each concurrency (runs interleaved, as in
the other scenarios): a distribution over every document (placeholder search, no hits) of one field
and of three, and one over the candidates of a text query. ``--data-dir`` keeps a loaded cluster.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

from bench.datasets import wait_for_task
from bench.loadgen import LoadSpec, Request
from bench.procstat import cluster_processes
from bench.report import LATENCY_COLUMNS, summarize_level
from bench.run import measure
from bench.search import ensure_loaded
from tests.support.cluster import RunningCluster

INDEX = "cities"
SETTINGS = {"filterableAttributes": ["country", "admin1", "admin2"]}
CLASSES: dict[str, dict[str, Any]] = {
    "all-country": {"facets": ["country"], "limit": 0},
    "all-3-fields": {"facets": ["country", "admin1", "admin2"], "limit": 0},
    "query-country": {"q": "san", "facets": ["country"], "limit": 20},
}
_JSON = (("Content-Type", "application/json"),)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run facets", description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--concurrency", default="1,16", help="comma-separated (1,16)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured per run and level")
    parser.add_argument("--runs", type=int, default=3, help="runs per class and level; tables show medians")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds before each run")
    parser.add_argument("--data-dir", type=Path, help="keep the cluster's data here; reuse a loaded index")
    parser.add_argument("--json", type=Path, help="result file; default bench/results/facets-<time>.json")
    args = parser.parse_args(argv)
    args.concurrency = [int(part) for part in args.concurrency.split(",") if part.strip()]
    return args


def _configure(client: httpx.Client) -> None:
    """Filterable fields after the load: the settings task re-indexes the facets (unchanged settings
    on a reused data directory change nothing)."""
    response = client.patch(f"/indexes/{INDEX}/settings", json=SETTINGS)
    response.raise_for_status()
    wait_for_task(client, int(response.json()["taskUid"]), time.monotonic() + 3600)


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    path = f"/indexes/{INDEX}/search"
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {
        (n, c): [] for n in CLASSES for c in args.concurrency
    }
    with (
        RunningCluster(shards=args.shards, data_dir=args.data_dir) as cluster,
        httpx.Client(base_url=cluster.url, timeout=300.0) as client,
    ):
        assert cluster.process is not None
        address = urlsplit(cluster.url)
        assert address.hostname is not None and address.port is not None
        loaded = ensure_loaded(client, INDEX, None, 0)
        _configure(client)
        samples = {name: client.post(path, json=body).json() for name, body in CLASSES.items()}
        for run_number in range(1, args.runs + 1):
            for name, body in CLASSES.items():
                request = (Request("POST", path, orjson.dumps(body), _JSON),)
                for c in args.concurrency:
                    print(
                        f"run {run_number}/{args.runs}, {name}, {c} clients ...", file=sys.stderr, flush=True
                    )
                    spec = LoadSpec(address.hostname, address.port, c, args.warmup, args.duration, request)
                    runs[name, c].append(measure(spec, cluster_processes(cluster.process.pid)))
    return {
        "scenario": "facets",
        "description": "facet distributions on cities (bench/facets.py)",
        "started_at": started_at,
        "options": {
            key: getattr(args, key) for key in ("shards", "concurrency", "duration", "runs", "warmup")
        },
        "environment": environment,
        "loaded": loaded,
        "classes": [
            {
                "class": name,
                "body": body,
                "values": {field: len(v) for field, v in samples[name].get("facetDistribution", {}).items()},
                "server_ms": samples[name].get("processingTimeMs"),
                "levels": [summarize_level(c, runs[name, c]) for c in args.concurrency],
            }
            for name, body in CLASSES.items()
        ],
    }


def render(report: dict[str, Any]) -> str:
    options, env = report["options"], report["environment"]
    lines = [
        f"{report['scenario']}: {report['description']}",
        f"{report['loaded']['documents']} documents | shards={options['shards']} runs={options['runs']}"
        f" duration={options['duration']}s | python {env['python']}, {env['cpus']} CPUs,"
        f" commit {env['commit']}, load avg {env['loadavg_before']:.2f} before start",
        "",
        f"{'class':<16} {'values per field':<34} {'clients':>7} {'req/s':>8} "
        + " ".join(f"{column.removesuffix('_ms') + ' ms':>8}" for column in LATENCY_COLUMNS)
        + f" {'errors':>6}",
    ]
    for entry in report["classes"]:
        values = ",".join(f"{field}={count}" for field, count in entry["values"].items())
        for level in entry["levels"]:
            median = level["median"]
            latencies = " ".join(f"{median[column]:>8.2f}" for column in LATENCY_COLUMNS)
            lines.append(
                f"{entry['class']:<16} {values:<34} {level['concurrency']:>7} {median['rps']:>8.1f} "
                f"{latencies} {median['errors']:>6}"
            )
    return "\n".join(lines)
