"""``python -m bench.run geo``: geo filters, numeric range filters and geo sort on ``cities`` (issue 6).

The 171k cities are loaded, then ``_geo`` and ``id`` made filterable and ``_geo`` sortable, then each class of
placeholder searches is driven through the closed-loop load generator like ``bench.run search``
(whose loading, probing and report this reuses): ``_geoRadius`` of 10 km and of 1000 km around
cities, a selective (``id a TO a+100``) and a broad (``id > a``, most documents) numeric range, and a
sort by distance to a city.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench.datasets import DATASETS, wait_for_task
from bench.loadgen import Request
from bench.procstat import cluster_processes
from bench.search import ensure_loaded, measure_classes, probe, resident_mib
from bench.search import render as render_search
from tests.support.cluster import RunningCluster

DATASET = "cities"
SETTINGS = {"filterableAttributes": ["_geo", "id"], "sortableAttributes": ["_geo"]}
CLASSES = ("radius_10km", "radius_1000km", "range_selective", "range_broad", "geo_sort")
_JSON = (("Content-Type", "application/json"),)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run geo", description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--concurrency", type=lambda text: [int(p) for p in text.split(",")], default=[1, 16])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured per run and level")
    parser.add_argument("--runs", type=int, default=3, help="runs per class and level; tables show medians")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds before each run")
    parser.add_argument("--queries", type=int, default=100, help="distinct requests per class")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--json", type=Path, help="result file; default bench/results/geo-<time>.json")
    return parser.parse_args(argv)


def bodies(seed: int, count: int) -> dict[str, list[dict[str, Any]]]:
    """Requests per class, centred on cities drawn from the dataset."""
    rng = random.Random(seed)
    cities = list(DATASETS[DATASET].documents())
    points = [(city["_geo"]["lat"], city["_geo"]["lng"]) for city in rng.sample(cities, count)]
    top = len(cities)
    return {
        "radius_10km": [{"q": "", "filter": f"_geoRadius({lat}, {lng}, 10000)"} for lat, lng in points],
        "radius_1000km": [{"q": "", "filter": f"_geoRadius({lat}, {lng}, 1000000)"} for lat, lng in points],
        "range_selective": [
            {"q": "", "filter": f"id {low} TO {low + 100}"} for low in rng.sample(range(top - 100), count)
        ],
        "range_broad": [{"q": "", "filter": f"id > {low}"} for low in rng.sample(range(top // 10), count)],
        "geo_sort": [{"q": "", "sort": [f"_geoPoint({lat}, {lng}):asc"]} for lat, lng in points],
    }


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    sets = bodies(args.seed, args.queries)
    path = f"/indexes/{DATASET}/search"
    requests = {
        name: tuple(Request("POST", path, orjson.dumps(body), _JSON) for body in sets[name])
        for name in CLASSES
    }
    with (
        RunningCluster(shards=args.shards) as cluster,
        httpx.Client(base_url=cluster.url, timeout=600.0) as client,
    ):
        assert cluster.process is not None
        loaded = ensure_loaded(client, DATASET, None, args.seed)
        started = time.monotonic()
        task = client.patch(f"/indexes/{DATASET}/settings", json=SETTINGS).json()["taskUid"]
        wait_for_task(client, task, started + 1200)
        loaded["settings_s"] = round(time.monotonic() - started, 2)
        loaded["resident_mib"] = resident_mib(cluster_processes(cluster.process.pid))
        print("probing each distinct request once ...", file=sys.stderr, flush=True)
        probes = {name: probe(client, DATASET, sets[name]) for name in CLASSES}
        classes = measure_classes(cluster, args, requests)
    return {
        "scenario": "geo",
        "description": "geo filters, numeric ranges and geo sort on cities (placeholder searches)",
        "started_at": started_at,
        "options": {
            "dataset": DATASET,
            "seed": args.seed,
            "shards": args.shards,
            "concurrency": args.concurrency,
            "duration": args.duration,
            "runs": args.runs,
            "warmup": args.warmup,
            "queries": args.queries,
        },
        "environment": environment,
        "loaded": loaded,
        "probes": probes,
        "classes": classes,
        "profile": None,
        "query_samples": {name: sets[name][:3] for name in CLASSES},
    }


def render(report: dict[str, Any]) -> str:
    return render_search(report)
