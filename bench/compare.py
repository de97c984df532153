"""``python -m bench.run compare``: Sift beside the reference engine, same data, same queries, one run.

For each dataset (``movies``, ``cities``, the ``synthetic`` corpus) a fresh Sift cluster
(``tests.support.cluster.RunningCluster``) and, with ``--reference``, a fresh reference server
(``bench/reference.py``) start on their own data directories. Each gets the index, the settings
(``bench/compare_classes.py``) and then the documents, as the issue measures ingestion: movies and
cities in one request (cities as its NDJSON file), the synthetic corpus in requests of 20,000 documents
sent back to back; indexing runs from the first 202 to the last task's ``finishedAt``. Then the bytes
of each data directory, each distinct request once on both (the probe: hits, errors, server time, and
a warm cache for both), and the query classes through ``wrk`` (``bench/wrk.py``), interleaved: for
each run and class, one engine at every concurrency then the other, the engine going first
alternating from run to run. Ratios are Sift / reference per run (the two measured back to back),
then their median. Peak RSS is the largest sampled sum over all of an engine's processes, during
ingestion or queries.

``--data-dir`` keeps both data directories (``sift-<dataset>``, ``reference-<dataset>``) and reuses
an index already holding the dataset (ingestion is then not measured): the million-document corpus
takes a quarter of an hour to load into both. ``--profile CLASS`` samples every Sift process with
py-spy while that class runs at the highest concurrency, after the measurements.

Baseline at 582a85d (bench commit 0960a84; ``--datasets movies,cities --runs 3 --duration 3 --warmup 1``,
load average 23 to 31 from other work on the 2 cores, so absolute figures are starved; ratios are
Sift / reference): QPS at 16 clients movies placeholder 0.48, word 0.24, two-words 0.21, prefix3 0.43,
typo 0.48, title3-highlight 1.79; cities word 0.28, name 0.43, prefix3 0.26, filter 0.29, geo-sort 2.22,
prefix3-facets 0.19. p50 at 1 client movies 1.69, 2.32, 1.29, 1.37, 4.86, 0.85; cities 2.25, 1.72, 1.24,
2.16, 1.39, 1.74. Ingestion docs/s movies 0.80, cities 0.11 (349 s against 38 s); data directory movies
0.29, cities 0.67; peak RSS movies 0.46, cities 0.98. The 1M corpus was not measured (its load did not
finish within the session at that machine load).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench import compare_classes, ingest, synthetic, wrk
from bench.compare_profile import profile_class
from bench.compare_report import render
from bench.datasets import DATASETS, wait_for_task
from bench.differential import subset
from bench.loadgen import Request
from bench.procstat import ProcessSampler, cluster_processes
from bench.reference import ARCHIVE, reference_server
from bench.run import _int_list
from tests.support.cluster import RunningCluster

DATASET_NAMES = ("movies", "cities", "synthetic")
DEFAULT_DOCS = 1_000_000
SYNTHETIC_CHUNK_DOCS = 20_000
_JSON = (("Content-Type", "application/json"),)
_TASK_TIMEOUT = 3600.0
_START_TIMEOUT = 600.0
_WHOLE = 1 << 30  # chunk size of ``ingest.payloads`` whose chunked bodies are then the single one


@dataclass(frozen=True)
class Engine:
    """One server under test: its URL, its data directory and, looked up when asked, its processes."""

    name: str
    url: str
    data_dir: Path
    pids: Callable[[], dict[str, int]]


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run compare", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reference",
        type=Path,
        nargs="?",
        const=ARCHIVE,
        help=f"the reference's xz archive (bare flag: {ARCHIVE.name}); without the flag, Sift alone",
    )
    parser.add_argument("--datasets", type=subset(DATASET_NAMES), default=list(DATASET_NAMES))
    parser.add_argument(
        "--classes", type=subset(compare_classes.ALL_CLASSES), help="a subset of the classes (default all)"
    )
    parser.add_argument("--docs", type=int, default=DEFAULT_DOCS, help="synthetic documents")
    parser.add_argument("--seed", type=int, default=synthetic.DEFAULT_SEED, help="corpus and query seed")
    parser.add_argument("--queries", type=int, default=200, help="distinct requests per class")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--concurrency", type=_int_list, default=[1, 16], help="comma-separated (1,16)")
    parser.add_argument("--duration", type=int, default=5, help="measured seconds per measurement")
    parser.add_argument("--runs", type=int, default=3, help="runs; 0 measures nothing (load, probe, profile)")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured seconds before each measurement")
    parser.add_argument("--data-dir", type=Path, help="keep both engines' data here; reuse loaded indexes")
    parser.add_argument(
        "--profile", type=subset(compare_classes.ALL_CLASSES), help="classes to py-spy after measuring"
    )
    parser.add_argument(
        "--variant",
        type=_variant,
        action="append",
        default=[],
        metavar="NAME=CHECKOUT[,OPTION...]",
        help="one more Sift beside the first, measured interleaved with it: another checkout's code "
        "(e.g. the base commit's worktree; . for this one) and extra `sift serve` options",
    )
    parser.add_argument("--json", type=Path, help="result file; default bench/results/compare-<time>.json")
    args = parser.parse_args(argv)
    if min(args.docs, args.queries, args.duration) < 1 or args.runs < 0 or args.warmup < 0:
        parser.error("--docs, --queries and --duration must be positive, --runs and --warmup not negative")
    if wrk.available() is None:
        parser.error("wrk is not installed (apt-get install wrk)")
    return args


@dataclass(frozen=True)
class Variant:
    """``--variant``: a Sift cluster started from ``checkout`` with ``options`` added."""

    name: str
    checkout: Path
    options: tuple[str, ...]


def _variant(text: str) -> Variant:
    name, _, rest = text.partition("=")
    checkout, *options = rest.split(",")
    if not name or not checkout or not (Path(checkout) / "sift" / "cli.py").is_file():
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=CHECKOUT[,OPTION...], a Sift checkout")
    return Variant(name, Path(checkout).resolve(), tuple(options))


def _sift(
    stack: ExitStack,
    name: str,
    data_dir: Path | None,
    args: argparse.Namespace,
    *options: str,
    env: dict[str, str] | None = None,
) -> Engine:
    cluster = RunningCluster(*options, shards=args.shards, data_dir=data_dir, env=env)
    stack.push(cluster.__exit__)
    # A loaded machine (other benchmarks, test suites) can take minutes to start four processes.
    cluster.start(timeout=_START_TIMEOUT)
    launcher = cluster.process
    assert launcher is not None
    return Engine(name, cluster.url, cluster.data_dir, lambda: cluster_processes(launcher.pid))


@contextmanager
def engines(args: argparse.Namespace, dataset: str) -> Iterator[list[Engine]]:
    """Sift (and the reference with ``--reference``) started on the dataset's data directories."""
    with ExitStack() as stack:
        kept = args.data_dir
        if kept is not None:
            kept.mkdir(parents=True, exist_ok=True)
        found = [_sift(stack, "sift", None if kept is None else kept / f"sift-{dataset}", args)]
        for variant in args.variant:
            name = f"sift-{variant.name}"
            data_dir = None if kept is None else kept / f"{name}-{dataset}"
            env = {"PYTHONPATH": str(variant.checkout)}
            found.append(_sift(stack, name, data_dir, args, *variant.options, env=env))
        if args.reference is not None:
            reference_dir = None if kept is None else kept / f"reference-{dataset}"
            server = stack.enter_context(
                reference_server(args.reference, reference_dir, timeout=_START_TIMEOUT)
            )
            found.append(Engine("reference", server.url, server.data_dir, lambda: {"reference": server.pid}))
        yield found


def payload(dataset: str, docs: int, seed: int, scratch: Path) -> ingest.Payload:
    """Movies and cities as one request, the synthetic corpus in requests of 20,000 (written first)."""
    if dataset == "synthetic":
        print(f"generating {docs} synthetic documents ...", file=sys.stderr, flush=True)
        return ingest.synthetic_payload(scratch / "synthetic.ndjson", docs, seed, SYNTHETIC_CHUNK_DOCS)
    return ingest.payloads(dataset, _WHOLE)["single"]


def load(engine: Engine, dataset: str, documents: int, make: Callable[[], ingest.Payload]) -> dict[str, Any]:
    """The index created with the class settings, then the documents, timed; only ``reused`` when the
    data directory already held them."""
    with httpx.Client(base_url=engine.url, timeout=600.0) as client:
        stats = client.get(f"/indexes/{dataset}/stats")
        if stats.status_code == 200:
            found = int(stats.json()["numberOfDocuments"])
            if found != documents:
                raise SystemExit(
                    f"{engine.name} holds {found} {dataset} documents, not {documents}: another --data-dir"
                )
            return {"reused": True}
        body = make()
        print(
            f"loading {body.documents} {dataset} documents into {engine.name} ...",
            file=sys.stderr,
            flush=True,
        )
        _task(client, client.post("/indexes", json={"uid": dataset, "primaryKey": body.primary_key}))
        if settings := compare_classes.SETTINGS[dataset]:
            _task(client, client.patch(f"/indexes/{dataset}/settings", json=settings))
        sampler = ProcessSampler(engine.pids())
        sent = ingest.send_sampled(client, body, sampler)
    index_s = (max(ingest.parse_ns(task["finishedAt"]) for task in sent.tasks) - sent.first_202_ns) / 1e9
    return {
        "reused": False,
        "requests": len(body.bodies),
        "payload_bytes": body.size,
        "index_s": round(index_s, 2),
        "docs_per_s": round(body.documents / index_s, 1),
        "peak_rss_mib": sampler.peak_total_mib(),
        "cpu_s": {
            name: None if f.cpu_pct is None else round(f.cpu_pct * sent.window_s / 100, 1)
            for name, f in sent.figures.items()
        },
    }


def _task(client: httpx.Client, response: httpx.Response) -> None:
    response.raise_for_status()
    wait_for_task(client, int(response.json()["taskUid"]), time.monotonic() + _TASK_TIMEOUT)


def probe(engine: Engine, dataset: str, bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """Each request once, one at a time: share with no hits, mean server time, errors (warms caches)."""
    no_hits, server_ms, errors = 0, [], 0
    with httpx.Client(base_url=engine.url, timeout=120.0) as client:
        for body in bodies:
            response = client.post(f"/indexes/{dataset}/search", json=body)
            if response.status_code != 200:
                errors += 1
                continue
            answer = response.json()
            no_hits += not answer["hits"]
            server_ms.append(float(answer["processingTimeMs"]))
    return {
        "requests": len(bodies),
        "errors": errors,
        "no_hits_pct": round(100 * no_hits / max(1, len(bodies) - errors), 1),
        "server_mean_ms": round(statistics.fmean(server_ms), 2) if server_ms else None,
    }


def measure(
    engine: Engine, requests: tuple[Request, ...], concurrency: int, args: argparse.Namespace
) -> dict[str, Any]:
    """One ``wrk`` measurement, with every process's CPU and the engine's summed RSS sampled meanwhile."""
    pids = engine.pids()
    samplers: list[ProcessSampler] = []

    def started(pid: int) -> None:
        samplers.append(ProcessSampler(pids))
        samplers[0].start()
        samplers[0].begin_window()

    try:
        result = wrk.run(engine.url, requests, concurrency, args.duration, args.warmup, on_start=started)
        samplers[0].end_window()
    finally:
        figures = samplers[0].stop() if samplers else {}
    result["cpu_pct"] = {name: f.cpu_pct for name, f in figures.items()}
    result["host_cpu_pct"] = round(samplers[0].host_cpu_pct(), 1)
    result["peak_rss_mib"] = samplers[0].peak_total_mib()
    return result


def measure_dataset(
    found: list[Engine], dataset: str, sets: dict[str, list[dict[str, Any]]], args: argparse.Namespace
) -> dict[str, dict[str, dict[int, list[dict[str, Any]]]]]:
    """Every class, run and engine at each concurrency, interleaved: ``[class][engine][clients]`` runs."""
    path = f"/indexes/{dataset}/search"
    requests = {
        name: tuple(Request("POST", path, orjson.dumps(b), _JSON) for b in bodies)
        for name, bodies in sets.items()
    }
    runs: dict[str, dict[str, dict[int, list[dict[str, Any]]]]] = {
        name: {engine.name: {c: [] for c in args.concurrency} for engine in found} for name in sets
    }
    for run in range(1, args.runs + 1):
        for name in sets:
            for engine in found if run % 2 else found[::-1]:
                for c in args.concurrency:
                    print(
                        f"run {run}/{args.runs}, {dataset} {name}, {engine.name}, {c} clients ...",
                        file=sys.stderr,
                        flush=True,
                    )
                    runs[name][engine.name][c].append(measure(engine, requests[name], c, args))
    return runs


def disk_bytes(path: Path) -> int:
    """Allocated bytes (as ``du``) under ``path``: sparse LMDB maps count what they hold."""
    return sum(entry.lstat().st_blocks * 512 for entry in [path, *path.rglob("*")])


def compare_dataset(dataset: str, args: argparse.Namespace, stamp: str) -> dict[str, Any] | None:
    """Both engines started, loaded, probed, measured and profiled on one dataset; None without classes."""
    docs = args.docs if dataset == "synthetic" else None
    sets = compare_classes.build(dataset, docs, args.seed, args.queries, args.classes)
    if not sets:
        return None
    documents = docs or sum(1 for _ in DATASETS[dataset].documents())
    with tempfile.TemporaryDirectory(prefix="sift-compare-") as scratch, engines(args, dataset) as found:
        made: list[ingest.Payload] = []

        def make() -> ingest.Payload:
            """Encoded (or, for synthetic, written) once, for the first engine that needs it."""
            if not made:
                made.append(payload(dataset, args.docs, args.seed, Path(scratch)))
            return made[0]

        loads = {}
        for engine in found:
            loads[engine.name] = load(engine, dataset, documents, make)
            print(f"{engine.name} {dataset}: {loads[engine.name]}", file=sys.stderr, flush=True)
        disk = {engine.name: disk_bytes(engine.data_dir) for engine in found}
        print(f"probing {dataset} ...", file=sys.stderr, flush=True)
        probes = {name: {e.name: probe(e, dataset, bodies) for e in found} for name, bodies in sets.items()}
        runs = measure_dataset(found, dataset, sets, args)
        profiles = {
            name: profile_class(found[0], dataset, name, sets[name], max(args.concurrency), args, stamp)
            for name in args.profile or ()
            if name in sets
        }
    return {
        "dataset": dataset,
        "documents": documents,
        "settings": compare_classes.SETTINGS[dataset],
        "loads": loads,
        "disk_bytes": disk,
        "probes": probes,
        "classes": summarize(runs, args.concurrency),
        "profiles": profiles,
        "query_samples": {name: bodies[:5] for name, bodies in sets.items()},
    }


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    """Every dataset in turn; after each, the report so far is printed (stderr) and saved to ``--json``,
    so that a long run stopped during the 1M corpus keeps what it measured before."""
    report: dict[str, Any] = {
        "scenario": "compare",
        "description": "Sift beside the reference engine: same data, settings and queries, interleaved",
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "options": {
            key: str(value) if isinstance(value, Path) else value
            for key, value in vars(args).items()
            if key not in ("json", "variant")
        }
        | {"variant": [f"{v.name}={v.checkout},{','.join(v.options)}" for v in args.variant]},
        "environment": environment,
        "datasets": [],
    }
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for dataset in args.datasets:
        result = compare_dataset(dataset, args, stamp)
        if result is None:
            continue
        report["datasets"].append(result)
        report["environment"] = {**environment, "loadavg_after": round(os.getloadavg()[0], 2)}
        if args.json is not None:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
        print(render(report), file=sys.stderr, flush=True)
    return report


def summarize(
    runs: dict[str, dict[str, dict[int, list[dict[str, Any]]]]], concurrency: list[int]
) -> dict[str, Any]:
    """Per class: each engine's medians per concurrency, and the median of the per-run ratios."""
    summary: dict[str, Any] = {}
    for name, by_engine in runs.items():
        entry: dict[str, Any] = {"engines": {}, "ratios": {}}
        for engine, levels in by_engine.items():
            entry["engines"][engine] = {
                str(c): {
                    **{
                        key: _median([r[key] for r in levels[c]])
                        for key in ("rps", "p50_ms", "p99_ms", "max_ms")
                    },
                    "errors": sum(r["errors"] for r in levels[c]),
                    "wrk_cpu_pct": _median([r["wrk_cpu_pct"] for r in levels[c]]),
                    "host_cpu_pct": _median([r["host_cpu_pct"] for r in levels[c]]),
                    "peak_rss_mib": max((r["peak_rss_mib"] for r in levels[c]), default=None),
                    "runs": levels[c],
                }
                for c in concurrency
            }
        if "reference" in by_engine:
            entry["ratios"] = _ratios(by_engine["sift"], by_engine["reference"], concurrency)
            entry["variant_ratios"] = {
                engine: _ratios(levels, by_engine["reference"], concurrency)
                for engine, levels in by_engine.items()
                if engine.startswith("sift-")
            }
        summary[name] = entry
    return summary


def _ratios(
    ours: dict[int, list[dict[str, Any]]], theirs: dict[int, list[dict[str, Any]]], concurrency: list[int]
) -> dict[str, dict[str, float | None]]:
    """Per concurrency, the median of the per-run ratios ours / theirs."""
    ratios = {}
    for c in concurrency:
        pairs = list(zip(ours[c], theirs[c], strict=True))
        ratios[str(c)] = {
            key: _median([a[key] / b[key] if b[key] else None for a, b in pairs])
            for key in ("rps", "p50_ms", "p99_ms")
        }
    return ratios


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.median(present), 3) if present else None
