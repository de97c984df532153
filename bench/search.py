"""``python -m bench.run search``: search latency and throughput per query class on a loaded dataset.

One cluster is loaded once (``movies``, ``cities`` or the ``synthetic`` corpus) and every query
class of ``bench/queries.py`` is driven through the closed-loop load generator at each concurrency,
runs interleaved as in the other scenarios. Before the load, each distinct request is sent once to
record how many hits it finds: the latency of a query that matches nothing is not that of one that
ranks thousands of documents, and the share changes as the engine gains typo and prefix matching.

Loading a million synthetic documents takes minutes, so ``--data-dir`` keeps the cluster's data
directory: a later run with the same directory finds the index and skips loading.
``--profile CLASS`` finally samples ``shard-0`` and the ``gateway`` with py-spy under that class's
load and writes collapsed stacks (flamegraph.pl / speedscope input) plus the top functions.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

from bench import ingest, queries, synthetic
from bench.datasets import DATASETS, wait_for_task
from bench.loadgen import LoadSpec, Request
from bench.procstat import ProcessSampler, cluster_processes
from bench.profiling import profile, render_profile
from bench.report import LATENCY_COLUMNS, peak_memory, summarize_level
from bench.run import measure
from tests.support.cluster import RunningCluster

# Title-like and body-like field of each dataset, the text queries are drawn from.
TEXT_FIELDS: dict[str, tuple[str, str | None]] = {
    "movies": ("title", "overview"),
    "cities": ("name", None),
    "synthetic": ("title", "body"),
}
DEFAULT_SYNTHETIC_DOCS = 1_000_000
SAMPLE_DOCS = 2000  # documents the queries are drawn from
# Synthetic documents are independent draws of one generator: the first 20,000 represent any N, and
# sampling them costs a second where generating a million costs twenty.
SYNTHETIC_SAMPLE_FROM = 20_000
_JSON = (("Content-Type", "application/json"),)
_LOAD_TIMEOUT = 3600.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run search", description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=sorted(TEXT_FIELDS), default="movies")
    parser.add_argument("--docs", type=int, help=f"synthetic documents (default {DEFAULT_SYNTHETIC_DOCS})")
    parser.add_argument("--seed", type=int, default=synthetic.DEFAULT_SEED, help="corpus and query seed")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--concurrency", type=_int_list, default=[1, 16], help="comma-separated (1,16)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured per run and level")
    parser.add_argument("--runs", type=int, default=3, help="runs per class and level; tables show medians")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds before each run")
    parser.add_argument(
        "--classes",
        type=_classes,
        default=list(queries.CLASSES),
        help=f"comma-separated subset of {','.join(queries.CLASSES)}",
    )
    parser.add_argument(
        "--queries", type=int, default=200, help="requests per class (prefix: whole sequences)"
    )
    parser.add_argument(
        "--data-dir", type=Path, help="keep the cluster's data here; reuse the loaded index if it is there"
    )
    parser.add_argument(
        "--profile",
        metavar="CLASS",
        choices=[*queries.CLASSES, "slowest"],
        help="after measuring, py-spy shard-0 and the gateway under this class's load "
        "(slowest: highest p50 at the highest concurrency)",
    )
    parser.add_argument("--json", type=Path, help="result file; default bench/results/search-<time>.json")
    args = parser.parse_args(argv)
    if args.docs is not None and args.dataset != "synthetic":
        parser.error("--docs applies to --dataset synthetic only")
    if min(args.runs, args.queries, args.docs or 1) < 1 or args.duration <= 0:
        parser.error("--runs, --queries, --docs and --duration must be positive")
    return args


def _int_list(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("expected positive integers such as 1,16")
    return values


def _classes(text: str) -> list[str]:
    values = [part.strip() for part in text.split(",") if part.strip()]
    if not values or any(value not in queries.CLASSES for value in values):
        raise argparse.ArgumentTypeError(f"expected a comma-separated subset of {','.join(queries.CLASSES)}")
    return values


def ensure_loaded(client: httpx.Client, dataset: str, docs: int | None, seed: int) -> dict[str, Any]:
    """Load ``dataset`` into the index of the same name unless the data directory already holds it.

    An index with another document count (other ``--docs``, or a load that was interrupted) stops
    the run rather than measuring a different corpus under the same name.
    """
    stats = client.get(f"/indexes/{dataset}/stats")
    if stats.status_code == 200:
        found = int(stats.json()["numberOfDocuments"])
        expected = docs if docs is not None else sum(1 for _ in DATASETS[dataset].documents())
        if found != expected:
            raise SystemExit(
                f"the data directory holds {found} {dataset} documents, not {expected}: "
                "use another --data-dir"
            )
        return {"reused": True, "documents": found, "load_s": None}
    with tempfile.TemporaryDirectory(prefix="sift-search-") as scratch:
        started = time.monotonic()
        if dataset == "synthetic":
            assert docs is not None
            print(f"generating {docs} synthetic documents ...", file=sys.stderr, flush=True)
            chunk = ingest.DEFAULT_CHUNK_DOCS["synthetic"]
            payload = ingest.synthetic_payload(Path(scratch) / "synthetic.ndjson", docs, seed, chunk)
        else:
            payload = ingest.payloads(dataset, ingest.DEFAULT_CHUNK_DOCS[dataset])["chunked"]
        print(f"loading {payload.documents} {dataset} documents ...", file=sys.stderr, flush=True)
        send(client, payload)
    return {"reused": False, "documents": payload.documents, "load_s": round(time.monotonic() - started, 2)}


def send(client: httpx.Client, payload: ingest.Payload) -> list[dict[str, Any]]:
    """Post every body back to back (each waits for its 202 only), then wait for all the tasks."""
    path = f"/indexes/{payload.dataset}/documents"
    headers = {"Content-Type": payload.content_type}
    task_uids = []
    for body in payload.bodies:
        response = client.post(
            path, params={"primaryKey": payload.primary_key}, content=body, headers=headers
        )
        if response.status_code != 202:
            raise RuntimeError(f"{path} answered {response.status_code}: {response.text[:500]}")
        task_uids.append(int(response.json()["taskUid"]))
    deadline = time.monotonic() + _LOAD_TIMEOUT
    return [wait_for_task(client, uid, deadline) for uid in task_uids]


def corpus(dataset: str, docs: int | None, seed: int) -> queries.Corpus:
    """The sample of documents queries are drawn from, read from the same source that was loaded."""
    title, body = TEXT_FIELDS[dataset]
    if dataset == "synthetic":
        assert docs is not None
        documents = synthetic.documents(min(docs, SYNTHETIC_SAMPLE_FROM), seed)
    else:
        documents = DATASETS[dataset].documents()
    return queries.Corpus.sample(documents, title, body, SAMPLE_DOCS, seed)


def probe(client: httpx.Client, path: str, bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """Each distinct request once, one at a time: how many find nothing, hits per request, errors.
    ``path``: a search, ``documents/fetch`` (whose ``results`` and ``total`` count as hits) or
    ``/multi-search`` (separate results: their hits and totals summed).

    The slowest request is kept too: one pathological query can dominate a class's p99.
    """
    distinct = list({orjson.dumps(body): body for body in bodies}.values())
    hits, totals, server_ms = [], [], []
    errors: Counter[str] = Counter()
    slowest: tuple[float, str] = (0.0, "")
    for body in distinct:
        started = time.perf_counter()
        response = client.post(path, json=body)
        label = body["q"] if "q" in body else orjson.dumps(body).decode()
        slowest = max(slowest, (round(1000 * (time.perf_counter() - started), 2), label))
        if response.status_code != 200:
            errors[f"{response.status_code} {response.text[:200]}"] += 1
            continue
        answers = _answers(response.json())
        hits.append(sum(len(answer["hits"] if "hits" in answer else answer["results"]) for answer in answers))
        totals.append(sum(int(_total(answer) or 0) for answer in answers))
        server_ms.append(sum(float(answer.get("processingTimeMs", math.nan)) for answer in answers))
    answered = len(hits) or 1
    return {
        "requests": len(distinct),
        "errors": sum(errors.values()),
        "error_kinds": dict(errors.most_common(3)),
        "no_hits_pct": round(100 * sum(not n for n in hits) / answered, 1),
        "mean_hits": round(statistics.fmean(hits), 2) if hits else None,
        "median_total_hits": statistics.median(totals) if totals else None,
        "server_mean_ms": round(statistics.fmean(server_ms), 3) if server_ms else None,
        "slowest": {"ms": slowest[0], "q": slowest[1]},
    }


def _answers(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """A multi-search without federation answers each query apart (``results`` without ``total``,
    which document reads have); any other route answers once."""
    return answer["results"] if "hits" not in answer and "total" not in answer else [answer]


def _total(answer: dict[str, Any]) -> Any:
    return answer.get("estimatedTotalHits") or answer.get("totalHits") or answer.get("total")


def resident_mib(pids: dict[str, int]) -> dict[str, float | None]:
    """``VmRSS`` of each process now (one sampling round): what the loaded, idle cluster holds."""
    sampler = ProcessSampler(pids)
    sampler.start()
    return {name: figures.peak_rss_mib for name, figures in sampler.stop().items()}


def measure_classes(
    cluster: RunningCluster, args: argparse.Namespace, requests: dict[str, tuple[Request, ...]]
) -> list[dict[str, Any]]:
    """Each class at each of ``args.concurrency``, ``args.runs`` times interleaved: per-level medians."""
    assert cluster.process is not None
    address = urlsplit(cluster.url)
    assert address.hostname is not None and address.port is not None
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {
        (name, c): [] for name in requests for c in args.concurrency
    }
    for run in range(1, args.runs + 1):
        for name in requests:
            for c in args.concurrency:
                print(f"run {run}/{args.runs}, {name}, {c} clients ...", file=sys.stderr, flush=True)
                spec = LoadSpec(address.hostname, address.port, c, args.warmup, args.duration, requests[name])
                # Looked up per measurement: a child the launcher restarted has a new pid.
                runs[name, c].append(measure(spec, cluster_processes(cluster.process.pid)))
    return [
        {
            "class": name,
            "levels": (levels := [summarize_level(c, runs[name, c]) for c in args.concurrency]),
            "peak_memory": peak_memory(levels),
        }
        for name in requests
    ]


def post_requests(
    sets: dict[str, list[dict[str, Any]]], path_of: Callable[[str], str]
) -> dict[str, tuple[Request, ...]]:
    """Each class's bodies as JSON POSTs to ``path_of(class)``."""
    return {
        name: tuple(Request("POST", path_of(name), orjson.dumps(body), _JSON) for body in bodies)
        for name, bodies in sets.items()
    }


@contextmanager
def bench_cluster(args: argparse.Namespace, timeout: float) -> Iterator[tuple[RunningCluster, httpx.Client]]:
    """A cluster of ``--shards`` on ``--data-dir`` (kept) or a temporary directory, and a client to it."""
    if args.data_dir is not None:
        args.data_dir.mkdir(parents=True, exist_ok=True)
    with (
        RunningCluster(shards=args.shards, data_dir=args.data_dir) as cluster,
        httpx.Client(base_url=cluster.url, timeout=timeout) as client,
    ):
        yield cluster, client


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    docs = (args.docs or DEFAULT_SYNTHETIC_DOCS) if args.dataset == "synthetic" else None
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    stamp = time.strftime("%Y%m%dT%H%M%S")
    sets = queries.build(corpus(args.dataset, docs, args.seed), args.seed, args.queries)
    requests = post_requests(sets, lambda _: f"/indexes/{args.dataset}/search")
    with bench_cluster(args, timeout=300.0) as (cluster, client):
        assert cluster.process is not None
        address = urlsplit(cluster.url)
        assert address.hostname is not None and address.port is not None
        loaded = ensure_loaded(client, args.dataset, docs, args.seed)
        loaded["resident_mib"] = resident_mib(cluster_processes(cluster.process.pid))
        print("probing each distinct request once ...", file=sys.stderr, flush=True)
        probes = {
            name: probe(client, f"/indexes/{args.dataset}/search", list(sets[name]))
            for name in args.classes
            if name != "mixed"
        }
        classes = measure_classes(cluster, args, {name: requests[name] for name in args.classes})
        profiled = None
        if args.profile:
            target = args.profile
            if target == "slowest":
                target = max(classes, key=lambda c: c["levels"][-1]["median"]["p50_ms"])["class"]
            print(f"profiling {target} ...", file=sys.stderr, flush=True)
            spec = LoadSpec(
                address.hostname, address.port, max(args.concurrency), 0.0, args.duration, requests[target]
            )
            profiled = {
                "class": target,
                **profile(cluster.process.pid, spec, f"{args.dataset}-{target}", stamp),
            }
    return {
        "scenario": "search",
        "description": "latency and throughput per query class (bench/queries.py) on a loaded dataset",
        "started_at": started_at,
        "options": {
            "dataset": args.dataset,
            "docs": docs,
            "seed": args.seed,
            "shards": args.shards,
            "concurrency": args.concurrency,
            "duration": args.duration,
            "runs": args.runs,
            "warmup": args.warmup,
            "queries": args.queries,
            "data_dir": None if args.data_dir is None else str(args.data_dir),
        },
        "environment": environment,
        "loaded": loaded,
        "probes": probes,
        "classes": classes,
        "profile": profiled,
        "query_samples": {name: [body["q"] for body in bodies[:10]] for name, bodies in sets.items()},
    }


def render(report: dict[str, Any]) -> str:
    options, env, loaded = report["options"], report["environment"], report["loaded"]
    dataset = options["dataset"]
    how = "reused from --data-dir" if loaded["reused"] else f"loaded in {loaded['load_s']} s"
    lines = [
        f"{report['scenario']}: {report['description']}",
        f"{dataset}: {loaded['documents']} documents, {how} | shards={options['shards']} "
        f"runs={options['runs']} duration={options['duration']}s warmup={options['warmup']}s "
        f"seed={options['seed']}",
        f"python {env['python']}, {env['cpus']} CPUs, commit {env['commit']}, "
        f"load avg {env['loadavg_before']:.2f} before start",
        "",
        "each distinct request once, one at a time (server = mean processingTimeMs)",
        f"{'class':<16} {'requests':>8} {'no hits':>9} {'mean hits':>10} {'med total':>10} "
        f"{'server ms':>10} {'errors':>7}  slowest request (ms, q)",
    ]
    for name, probe_ in report["probes"].items():
        lines.append(
            f"{name:<16} {probe_['requests']:>8} {probe_['no_hits_pct']:>8.1f}% "
            f"{_cell(probe_['mean_hits'], 10, 2)} {_cell(probe_['median_total_hits'], 10, 0)} "
            f"{_cell(probe_['server_mean_ms'], 10, 2)} {probe_['errors']:>7}  "
            f"{probe_['slowest']['ms']:.1f} {probe_['slowest']['q'][:40]!r}"
        )
    lines += [
        "",
        "medians of runs; latency from the client; host: CPU % of the whole machine (200 = 2 cores),",
        "other: host minus the cluster, runner and load generator (other work on the machine)",
        f"{'dataset':<10} {'class':<16} {'clients':>7} {'req/s':>9} "
        + " ".join(f"{column.removesuffix('_ms') + ' ms':>8}" for column in LATENCY_COLUMNS)
        + f" {'errors':>6} {'host %':>6} {'other %':>7}",
    ]
    for entry in report["classes"]:
        for level in entry["levels"]:
            median, cpu = level["median"], level["cpu_pct_median"]
            latencies = " ".join(_cell(median[column], 8, 2) for column in LATENCY_COLUMNS)
            lines.append(
                f"{dataset:<10} {entry['class']:<16} {level['concurrency']:>7} {median['rps']:>9.1f} "
                f"{latencies} {median['errors']:>6} {_cell(cpu['host'], 6, 0)} {_cell(cpu['other'], 7, 0)}"
            )
    names = [name for name in loaded["resident_mib"] if name != "runner"]
    lines += [
        "",
        "memory MiB: RSS of the loaded cluster before the queries, then peak sampled RSS under each class",
        f"{'process':<10} {'loaded':>9}" + "".join(f"{entry['class']:>16}" for entry in report["classes"]),
    ]
    for name in names:
        peaks = [entry["peak_memory"].get(name, {}).get("peak_rss_mib") for entry in report["classes"]]
        lines.append(
            f"{name:<10} {_cell(loaded['resident_mib'][name], 9, 1)}"
            + "".join(_cell(p, 16, 1) for p in peaks)
        )
    if report["profile"]:
        lines += ["", *render_profile(report["profile"])]
    return "\n".join(lines)


def _cell(value: float | None, width: int, digits: int) -> str:
    """A right-aligned number, or ``-`` where there is none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return f"{'-':>{width}}"
    return f"{value:>{width}.{digits}f}"
