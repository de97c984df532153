"""``python -m bench.run auth``: what authentication costs a search.

Two clusters run side by side on the same ``movies`` index, one without a master key and one with
(its searches carry a search API key); runs alternate between them so that drift of a noisy machine
hits both alike. Search latency is measured at one client, where it is pure round-trip time. The
check itself (``Guard.authorize``) is then timed in-process with ``timeit``, for the master key, an
API key in rings of a few and of many keys (a lookup, not a scan), and a tenant token.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
import timeit
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import jwt
import orjson

from bench import datasets, queries
from bench.loadgen import LoadSpec, Request
from bench.procstat import cluster_processes
from bench.report import LATENCY_COLUMNS, heading, summarize_level
from bench.run import measure
from bench.search import corpus
from gateway.auth.guard import Guard
from gateway.auth.keyring import KeyRing
from tests.support.cluster import RunningCluster

MASTER_KEY = "bench-master-key-0123456789abcdef"
INDEX = "movies"
_JSON = ("Content-Type", "application/json")
_SEED = 7
TARGET_MS = 0.2


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run auth", description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured per run and cluster")
    parser.add_argument("--runs", type=int, default=3, help="runs per cluster; the table shows their median")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds before each run")
    parser.add_argument("--queries", type=int, default=200, help="distinct search requests cycled through")
    parser.add_argument("--keys", type=int, default=10_000, help="keys in the large ring of the check timing")
    parser.add_argument("--json", type=Path, help="result file; default bench/results/auth-<time>.json")
    return parser.parse_args(argv)


def check_cost(ring_size: int, number: int = 20_000, repeat: int = 7) -> dict[str, dict[str, float]]:
    """Microseconds per ``Guard.authorize`` call (median and best of ``repeat`` timings)."""
    figures: dict[str, dict[str, float]] = {}
    for size in (4, ring_size):
        ring = KeyRing(MASTER_KEY)
        records = [_record(["search"]) for _ in range(size)]
        for record in records:
            ring.put(record)
        guard = Guard(MASTER_KEY, ring)
        key = ring.by_uid(records[-1]["uid"])
        assert key is not None
        cases = {f"api key, {size} keys": f"Bearer {key.key}"}
        if size == ring_size:
            token = jwt.encode({"apiKeyUid": key.uid, "searchRules": {INDEX: None}}, key.key, "HS256")
            cases |= {"master key": f"Bearer {MASTER_KEY}", "tenant token": f"Bearer {token}"}
        for label, header in cases.items():
            check = functools.partial(guard.authorize, "search", INDEX, header)
            times = timeit.repeat(check, number=number, repeat=repeat)
            per_call = [t / number * 1e6 for t in times]
            figures[label] = {
                "median_us": round(statistics.median(per_call), 2),
                "best_us": round(min(per_call), 2),
            }
    return figures


def _record(actions: list[str]) -> dict[str, Any]:
    return {
        "uid": str(uuid.uuid4()),
        "name": None,
        "description": None,
        "actions": actions,
        "indexes": ["*"],
        "expiresNs": None,
        "createdNs": 1,
        "updatedNs": 1,
    }


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    bodies = [
        orjson.dumps(b) for b in queries.build(corpus(INDEX, None, _SEED), _SEED, args.queries)["exact"]
    ]
    path = f"/indexes/{INDEX}/search"
    runs: dict[str, list[dict[str, Any]]] = {"no master key": [], "master key + search key": []}
    with ExitStack() as stack:
        open_cluster = stack.enter_context(RunningCluster(shards=args.shards))
        secured = stack.enter_context(RunningCluster("--master-key", MASTER_KEY, shards=args.shards))
        admin = {"Authorization": f"Bearer {MASTER_KEY}"}
        print("loading movies into both clusters ...", file=sys.stderr, flush=True)
        datasets.load(open_cluster.url, INDEX, INDEX)
        datasets.load(secured.url, INDEX, INDEX, headers=admin)
        created = httpx.post(
            f"{secured.url}/keys",
            json={"actions": ["search"], "indexes": [INDEX], "expiresAt": None},
            headers=admin,
        )
        created.raise_for_status()
        search_key = ("Authorization", f"Bearer {created.json()['key']}")
        targets = {
            "no master key": (open_cluster, tuple(Request("POST", path, b, (_JSON,)) for b in bodies)),
            "master key + search key": (
                secured,
                tuple(Request("POST", path, b, (_JSON, search_key)) for b in bodies),
            ),
        }
        for number in range(1, args.runs + 1):
            for label, (cluster, requests) in targets.items():
                print(f"run {number}/{args.runs}, {label} ...", file=sys.stderr, flush=True)
                address = urlsplit(cluster.url)
                assert (
                    address.hostname is not None and address.port is not None and cluster.process is not None
                )
                spec = LoadSpec(address.hostname, address.port, 1, args.warmup, args.duration, requests)
                runs[label].append(measure(spec, cluster_processes(cluster.process.pid)))
    print("timing the check in-process ...", file=sys.stderr, flush=True)
    return {
        "scenario": "auth",
        "description": "search latency at 1 client without and with a master key; Guard.authorize cost",
        "started_at": started_at,
        "options": {k: getattr(args, k) for k in ("shards", "duration", "runs", "warmup", "queries", "keys")},
        "environment": environment,
        "levels": {label: summarize_level(1, level_runs) for label, level_runs in runs.items()},
        "check": check_cost(args.keys),
    }


def render(report: dict[str, Any]) -> str:
    lines = [
        *heading(report),
        f"{'cluster (1 client)':<26} {'req/s':>8} "
        + " ".join(f"{c.replace('_ms', ''):>8}" for c in LATENCY_COLUMNS)
        + "  (ms, median of runs)",
    ]
    medians = {label: level["median"] for label, level in report["levels"].items()}
    for label, median in medians.items():
        lines.append(
            f"{label:<26} {median['rps']:>8.1f} " + " ".join(f"{median[c]:>8.3f}" for c in LATENCY_COLUMNS)
        )
    base, secured = medians["no master key"], medians["master key + search key"]
    lines += [
        f"{'difference':<26} {'':>8} {secured['p50_ms'] - base['p50_ms']:>+8.3f} {'':>8} "
        f"{secured['p99_ms'] - base['p99_ms']:>+8.3f}",
        "",
        f"Guard.authorize, in-process (target < {TARGET_MS * 1000:.0f} us per request)",
    ]
    for label, figures in report["check"].items():
        lines.append(
            f"  {label:<24} median {figures['median_us']:>7.2f} us   best {figures['best_us']:>7.2f} us"
        )
    return "\n".join(lines)
