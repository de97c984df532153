"""``python -m bench.run docsort``: ``sort`` on ``POST /documents/fetch`` over ``cities`` (171k documents).

The cities are loaded, ``country`` made filterable and ``name``, ``country``, ``id`` and ``_geo``
sortable, then each class of document reads is driven through the closed-loop load generator like
``bench.run geo`` (whose loading, probing, measuring and report this reuses): one string field from a
random offset, two fields, a filter with a sort, a numeric field descending, and distance to a city.
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
SETTINGS = {"filterableAttributes": ["country"], "sortableAttributes": ["name", "country", "id", "_geo"]}
CLASSES = ("name_asc", "country_name", "filter_name", "id_desc", "geo_point")
_JSON = (("Content-Type", "application/json"),)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run docsort", description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--concurrency", type=lambda text: [int(p) for p in text.split(",")], default=[1])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured per run and level")
    parser.add_argument("--runs", type=int, default=3, help="runs per class and level; tables show medians")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds before each run")
    parser.add_argument("--queries", type=int, default=100, help="distinct requests per class")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--json", type=Path, help="result file; default bench/results/docsort-<time>.json")
    return parser.parse_args(argv)


def bodies(seed: int, count: int) -> dict[str, list[dict[str, Any]]]:
    """Request bodies per class: offsets up to 1,000, countries and points drawn from the dataset."""
    rng = random.Random(seed)
    cities = rng.sample(list(DATASETS[DATASET].documents()), count)
    offsets = [rng.randrange(1000) for _ in range(count)]
    return {
        "name_asc": [{"sort": ["name:asc"], "offset": offset, "limit": 20} for offset in offsets],
        "country_name": [
            {"sort": ["country:desc", "name:asc"], "offset": offset, "limit": 20} for offset in offsets
        ],
        "filter_name": [
            {"filter": f"country = {city['country']}", "sort": ["name:desc"], "limit": 20} for city in cities
        ],
        "id_desc": [{"sort": ["id:desc"], "offset": offset, "limit": 20} for offset in offsets],
        "geo_point": [
            {"sort": [f"_geoPoint({city['_geo']['lat']}, {city['_geo']['lng']}):asc"], "limit": 20}
            for city in cities
        ],
    }


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    sets = bodies(args.seed, args.queries)
    path = f"/indexes/{DATASET}/documents/fetch"
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
        probes = {name: probe(client, DATASET, sets[name], "documents/fetch") for name in CLASSES}
        classes = measure_classes(cluster, args, requests)
    return {
        "scenario": "docsort",
        "description": "sort on POST /documents/fetch over cities",
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
