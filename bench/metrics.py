"""``python -m bench.metrics``: what ``/metrics`` costs search throughput, and how long a scrape takes.

One cluster holds ``--indexes`` indexes of ``--documents`` synthetic documents each. Runs alternate
between the ``metrics`` feature off and on (``PATCH /experimental-features``), each a ``wrk`` load of
``--connections`` clients for ``--duration`` s on keyword searches over the indexes; while metrics are
on, a scraper thread reads ``/metrics`` every ``--scrape-interval`` s (Prometheus scrapes every 15 s by
default, so 1 s overstates the cost). Printed per run: requests per second, p50/p99 and the cluster's
CPU per request, and for the scrapes under load their median and highest time; then the medians over
runs, the median of each run pair's ratio, and the scrape time on an idle cluster (median and p90 of
40 scrapes, and the cluster's CPU time per scrape, which the machine's other load does not stretch)."""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
import timeit
from functools import partial
from types import SimpleNamespace
from typing import Any

import httpx
import orjson
from prometheus_client import Histogram
from prometheus_client.parser import text_string_to_metric_families

from bench import wrk
from bench.loadgen import Request
from bench.procstat import cluster_processes, cpu_seconds
from gateway.metrics import GatewayMetrics
from gateway.search.queue import SearchQueue
from tests.support.client import switch_features, wait_task
from tests.support.cluster import RunningCluster

_WORDS = [
    "river", "stone", "light", "garden", "winter", "market", "silver", "letter", "harbor", "forest", "shadow",
    "engine", "mirror", "valley", "island", "window", "thunder", "lantern", "orchard", "meadow", "castle",
    "bridge", "candle", "desert", "ocean", "falcon",
]  # fmt: skip
_IDLE_SCRAPES = 40
_QUERIES = ("river", "stone garden", "winter mark", "silver lettre", "harbor forest shadow", "lantern")


def _documents(index: int, count: int) -> list[dict[str, Any]]:
    words = len(_WORDS)
    return [
        {
            "id": k,
            "title": " ".join(_WORDS[(k * 7 + index + j * 3) % words] for j in range(3)),
            "body": " ".join(_WORDS[(k * 11 + j * 5 + index) % words] for j in range(12)),
        }
        for k in range(count)
    ]


def _load(cluster: RunningCluster, indexes: int, documents: int) -> None:
    with httpx.Client(base_url=cluster.url, timeout=120) as client:
        tasks = [
            client.post(f"/indexes/bench-metrics-{i}/documents", json=_documents(i, documents)).json()[
                "taskUid"
            ]
            for i in range(indexes)
        ]
    for uid in tasks:
        assert wait_task(cluster, uid, timeout=600)["status"] == "succeeded"


def _scrape(url: str) -> float:
    started = time.perf_counter()
    response = httpx.get(f"{url}/metrics", timeout=30)
    assert response.status_code == 200, response.text
    return (time.perf_counter() - started) * 1000


def _served_scrapes(url: str) -> tuple[int, float]:
    """How many scrapes the gateway answered and their mean time there, in ms (its own histogram)."""
    families = text_string_to_metric_families(httpx.get(f"{url}/metrics", timeout=30).text)
    found = {
        sample.name: sample.value
        for family in families
        for sample in family.samples
        if sample.labels.get("path") == "/metrics" and sample.name.endswith(("_sum", "_count"))
    }
    count = int(found.get("meilisearch_http_response_time_seconds_count", 0))
    return count, 1000 * found.get("meilisearch_http_response_time_seconds_sum", 0.0) / max(count, 1)


class _On:
    """Features with ``metrics`` on, for the in-process timing."""

    def enabled(self, name: str) -> bool:
        return True


def instrumentation_us(shards: int, repeat: int = 20_000) -> float:
    """What metrics add to one search, timed in process: the gateway's request counter and time, its
    round trip per shard (the done-callback ``Cluster.search`` adds and its observation), each shard's
    search time; microseconds per search."""
    metrics = GatewayMetrics(_On(), SearchQueue(1, 1, 1.0))  # type: ignore[arg-type]
    shard_seconds = Histogram("bench_shard_seconds", "", ["shard"], registry=None).labels("0")
    route = SimpleNamespace(path="indexes/<index_uid:str>/search")
    request = SimpleNamespace(
        route=route, method="POST", path="/indexes/x/search", arrived=time.perf_counter()
    )
    response = SimpleNamespace(status=200)

    def answered(peer: str, sent: float, _call: object) -> None:
        if metrics.active:
            metrics.round_trip_of(peer, "Search").observe(time.perf_counter() - sent)

    def one_search() -> None:
        sent = time.perf_counter()
        for k in range(shards):
            partial(answered, f"shard-{k}", sent)(None)
            shard_seconds.observe(0.001)
        metrics.record_response(request, response)  # type: ignore[arg-type]

    return timeit.timeit(one_search, number=repeat) / repeat * 1e6


class _Scraper(threading.Thread):
    def __init__(self, url: str, interval: float) -> None:
        super().__init__(daemon=True)
        self.url, self.interval = url, interval
        self.times_ms: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.interval):
            self.times_ms.append(_scrape(self.url))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.metrics", description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--indexes", type=int, default=10)
    parser.add_argument("--documents", type=int, default=2000, help="documents per index")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind; medians are printed")
    parser.add_argument("--scrape-interval", type=float, default=1.0)
    args = parser.parse_args()
    requests = [
        Request(
            "POST",
            f"/indexes/bench-metrics-{k % args.indexes}/search",
            orjson.dumps({"q": query}),
            (("Content-Type", "application/json"),),
        )
        for k, query in enumerate(_QUERIES * args.indexes)
    ]
    results: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
    with RunningCluster(shards=args.shards) as cluster:
        _load(cluster, args.indexes, args.documents)
        for run in range(args.runs):
            for kind in ("off", "on"):
                switch_features(cluster, metrics=kind == "on")
                scraper = _Scraper(cluster.url, args.scrape_interval) if kind == "on" else None
                if scraper is not None:
                    scraper.start()
                assert cluster.process is not None
                pids = [
                    pid for name, pid in cluster_processes(cluster.process.pid).items() if name != "launcher"
                ]
                used: list[float] = []
                result = wrk.run(
                    cluster.url,
                    requests,
                    args.connections,
                    args.duration,
                    args.warmup,
                    on_start=lambda _pid, used=used, pids=pids: used.append(cpu_seconds(pids)),
                )
                # The cluster's CPU per request: what a saturated machine's throughput is the inverse of,
                # and far steadier than req/s on a machine shared with other work.
                result["cpu_ms_per_request"] = (
                    1000 * (cpu_seconds(pids) - used[0]) / max(result["requests"], 1)
                )
                if scraper is not None:
                    scraper.done.set()
                    scraper.join()
                    result["scrapes_ms"] = scraper.times_ms
                results[kind].append(result)
                scrapes = result.get("scrapes_ms") or [0.0]
                print(
                    f"run {run} metrics {kind:>3}: {result['rps']:.0f} req/s, p50 {result['p50_ms']:.1f} ms, "
                    f"p99 {result['p99_ms']:.1f} ms, errors {result['errors']}, "
                    f"cluster CPU {result['cpu_ms_per_request']:.2f} ms/request"
                    + (
                        f"; {len(scrapes)} scrapes, median {statistics.median(scrapes):.1f} ms, "
                        f"max {max(scrapes):.1f} ms"
                        if kind == "on"
                        else ""
                    ),
                    flush=True,
                )
        served, served_ms = _served_scrapes(cluster.url)  # the scrapes under load
        time.sleep(1)
        before = cpu_seconds(pids)
        idle = sorted(_scrape(cluster.url) for _ in range(_IDLE_SCRAPES))
        scrape_cpu_ms = 1000 * (cpu_seconds(pids) - before) / _IDLE_SCRAPES
    off, on = (statistics.median(r["rps"] for r in results[kind]) for kind in ("off", "on"))
    added_us = statistics.median(instrumentation_us(args.shards) for _ in range(5))
    cpu_off = statistics.median(r["cpu_ms_per_request"] for r in results["off"])
    pairs = list(zip(results["off"], results["on"], strict=True))
    ratio = statistics.median(b["rps"] / a["rps"] for a, b in pairs)
    cpu = statistics.median(b["cpu_ms_per_request"] / a["cpu_ms_per_request"] for a, b in pairs)
    print(
        f"median of {args.runs}: {off:.0f} req/s with metrics off, {on:.0f} req/s on and scraped every "
        f"{args.scrape_interval:g} s (median run-pair ratio {ratio:.3f}, cost {100 * (1 - ratio):.1f} %); "
        f"cluster CPU per request on/off median ratio {cpu:.3f} ({100 * (cpu - 1):+.1f} %); "
        f"instrumentation timed in process {added_us:.1f} µs per search = "
        f"{added_us / (10 * cpu_off):.2f} % of the {cpu_off:.2f} ms the cluster spends on one; "
        f"idle scrape with {args.indexes} indexes: median {statistics.median(idle):.1f} ms, "
        f"p90 {idle[int(0.9 * len(idle))]:.1f} ms (client side); the {served} scrapes under load took "
        f"{served_ms:.1f} ms on average in the gateway; an idle scrape costs the cluster "
        f"{scrape_cpu_ms:.1f} ms of CPU; load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
