"""``python -m bench.run <scenario>``: start a fresh cluster, measure it, print and save the figures.

``python -m bench.run ingest [...]`` measures indexing instead (``bench/ingest.py``), ``embedding``
the local embedding model's docs/s, load time and memory (``bench/embedding.py``), ``relevance``
ranking quality on Cranfield (``bench/relevance.py``), ``relevance-fusion`` ways of fusing its
bm25 and MiniLM legs, offline (``bench/relevance_fusion.py``), ``search`` the latency of query classes on a
loaded dataset (``bench/search.py``), ``facets`` facet distributions on cities (``bench/facets.py``),
``geo`` geo and range filters and geo sort on ``cities`` (``bench/geo.py``), ``multisearch``
separate and federated multi-search on movies (``bench/multisearch.py``), ``distinct`` search with
distinct on an array field (``bench/distinct.py``), ``vector-search`` semantic and hybrid search
beside the reference (``bench/vector_search.py``), ``differential`` the first pages of seeded queries
against the reference engine's (``bench/differential.py``), ``docsort`` sorted
document reads on ``cities`` (``bench/docsort.py``), ``auth`` the cost of
authentication (``bench/auth.py``), ``vectors`` the shard's vector store (``bench/vectors.py``) and
``dumps`` dump and import time and size on cities (``bench/dumps.py``), ``snapshots`` snapshot
time and size (``bench/snapshots.py``), ``known-item`` whether known titles are found from
typed variants of them (``bench/known_item.py``) and ``compare`` issue 23's query classes,
ingestion, disk and memory beside the reference engine (``bench/compare.py``); each has its own options.

Runs are interleaved (run 1 at every concurrency, then run 2, ...) so that slow drift of a noisy
machine spreads over all levels instead of biasing one of them.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import orjson

from bench import ingest
from bench.loadgen import REPO_ROOT, LoadProcess, LoadSpec
from bench.procstat import ProcessSampler, cluster_processes
from bench.report import peak_memory, render, summarize_level
from bench.scenarios import SCENARIOS, Scenario
from tests.support.cluster import RunningCluster

RESULTS_DIR = REPO_ROOT / "bench" / "results"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run",
        description=__doc__.splitlines()[0],
        epilog="`python -m bench.run <scenario> --help`: options of each non-default scenario",
    )
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument(
        "--concurrency", type=_int_list, default=[1, 16], help="simulated clients, comma-separated (1,16)"
    )
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured per run and level")
    parser.add_argument("--runs", type=int, default=3, help="runs per level; the table shows their median")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds before each run")
    parser.add_argument("--json", type=Path, help="result file; default bench/results/<scenario>-<time>.json")
    return parser.parse_args(argv)


def _int_list(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("expected positive integers such as 1,16")
    return values


def measure(spec: LoadSpec, pids: dict[str, int]) -> dict[str, Any]:
    """One run at one concurrency: the load generator's figures plus each process's CPU and memory."""
    load = LoadProcess(spec)
    sampler = ProcessSampler({**pids, "runner": os.getpid(), "loadgen": load.pid})
    sampler.start()
    result: dict[str, Any] | None = None
    try:
        for event in load.events():
            if event["event"] == "measuring":
                sampler.begin_window()
            elif event["event"] == "measured":
                sampler.end_window()
            elif event["event"] == "result":
                result = event["result"]
    finally:
        figures = sampler.stop()
        code = load.close()
    if result is None:
        raise RuntimeError(f"the load generator exited with code {code} before reporting a result")
    result["host_cpu_pct"] = round(sampler.host_cpu_pct(), 1)
    result["processes"] = {name: asdict(f) for name, f in figures.items()}
    return result


def environment() -> dict[str, Any]:
    """Python, CPUs, commit and the load average before the start, recorded with every result."""
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "commit": _commit(),
        "loadavg_before": os.getloadavg()[0],
    }


def run_scenario(scenario: Scenario, args: argparse.Namespace) -> dict[str, Any]:
    env = environment()
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    runs: dict[int, list[dict[str, Any]]] = {c: [] for c in args.concurrency}
    with RunningCluster(shards=args.shards) as cluster:
        assert cluster.process is not None
        address = urlsplit(cluster.url)
        assert address.hostname is not None and address.port is not None
        for run in range(1, args.runs + 1):
            for concurrency in args.concurrency:
                print(f"run {run}/{args.runs}, {concurrency} clients ...", file=sys.stderr, flush=True)
                spec = LoadSpec(
                    address.hostname, address.port, concurrency, args.warmup, args.duration, scenario.requests
                )
                # Looked up per measurement: a child the launcher restarted has a new pid.
                runs[concurrency].append(measure(spec, cluster_processes(cluster.process.pid)))
    levels = [summarize_level(c, runs[c]) for c in args.concurrency]
    return {
        "scenario": scenario.name,
        "description": scenario.description,
        "started_at": started_at,
        "options": {
            "shards": args.shards,
            "concurrency": args.concurrency,
            "duration": args.duration,
            "runs": args.runs,
            "warmup": args.warmup,
        },
        "environment": env,
        "levels": levels,
        "peak_memory": peak_memory(levels),
    }


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def own_cli(name: str) -> ModuleType | None:
    """The module of a benchmark with its own options (``parse_args``, ``run``, ``render``), else None.

    Imported on demand: ``bench.search`` reuses ``measure`` from this module.
    """
    if name == "ingest":
        return ingest
    if name == "embedding":
        from bench import embedding

        return embedding
    if name == "geo":
        from bench import geo

        return geo
    if name == "docsort":
        from bench import docsort

        return docsort
    if name == "vectors":
        from bench import vectors

        return vectors
    if name == "relevance":
        from bench import relevance

        return relevance
    if name == "relevance-fusion":
        from bench import relevance_fusion

        return relevance_fusion
    if name == "search":
        from bench import search

        return search
    if name == "auth":
        from bench import auth

        return auth
    if name == "differential":
        from bench import differential

        return differential
    if name == "facets":
        from bench import facets

        return facets
    if name == "distinct":
        from bench import distinct

        return distinct
    if name == "dumps":
        from bench import dumps

        return dumps
    if name == "multisearch":
        from bench import multisearch

        return multisearch
    if name == "snapshots":
        from bench import snapshots

        return snapshots
    if name == "known-item":
        from bench import known_item

        return known_item
    if name == "compare":
        from bench import compare

        return compare
    if name == "vector-search":
        from bench import vector_search

        return vector_search
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and (module := own_cli(argv[0])) is not None:
        args = module.parse_args(argv[1:])
        report = module.run(args, environment())
        text = module.render(report)
    else:
        args = parse_args(argv)
        report = run_scenario(SCENARIOS[args.scenario], args)
        text = render(report)
    path: Path = args.json or RESULTS_DIR / f"{report['scenario']}-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    print(text)
    print(f"\nJSON: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
