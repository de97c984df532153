"""``python -m bench.run ingest``: how fast a fresh cluster indexes a whole dataset, and what it keeps.

Each run of each dataset starts two fresh clusters in turn: one receives the dataset as a single
request, the other in chunks of ``--chunk-docs`` documents sent back to back (each request waits for
its 202, never for its task). The indexing time runs from the client's 202 of the first request to
the server's ``finishedAt`` of the last task (same machine, same wall clock), so the figure does not
depend on how often the client polls.

``synthetic`` (``bench/synthetic.py``) is generated into a temporary NDJSON file before any cluster
starts and sent in chunks only (a single 600 MB request is no realistic load), each body read from the
file just before it is sent, so the client holds about one chunk at a time.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import httpx
import orjson

from bench import synthetic
from bench.datasets import DATASETS, DATASETS_DIR, wait_for_task
from bench.procstat import ProcessFigures, ProcessSampler, cluster_processes
from common.layout import DataLayout
from tests.support.cluster import RunningCluster

INGEST_DATASETS = ("movies", "cities", "synthetic")
# About a tenth of each real dataset, so that chunked sends enough requests for the scheduler to batch;
# synthetic bodies of ~12 MB, well under the default 100 MB payload limit.
DEFAULT_CHUNK_DOCS = {"movies": 200, "cities": 10_000, "synthetic": 20_000}
# A million documents when synthetic is measured alone; beside the real datasets (``all``) a tenth, so
# that the whole suite stays within minutes.
DEFAULT_SYNTHETIC_DOCS = {"synthetic": 1_000_000, "all": 100_000}
_CONTENT_TYPES = {".json": "application/json", ".ndjson": "application/x-ndjson"}
_MB = 1_000_000
_TASK_TIMEOUT = 3600.0
_SCALAR_KEYS = (
    "first_202_s",
    "sent_s",
    "index_s",
    "total_s",
    "docs_per_s",
    "mb_per_s",
    "batches",
    "disk_ratio",
    "shard_disk_ratio",
    "host_cpu_s",
    "cluster_peak_rss_mib",
)


class Bodies(Protocol):
    """Request bodies that can be counted and iterated (more than once: one pass per run)."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[bytes]: ...


@dataclass(frozen=True)
class FileChunks:
    """Bodies read from a file as they are sent, ``sizes`` bytes each, so only one is held at a time."""

    path: Path
    sizes: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.sizes)

    def __iter__(self) -> Iterator[bytes]:
        with open(self.path, "rb") as file:
            for size in self.sizes:
                # httpx's request and response objects form reference cycles that keep the previous
                # body alive until a collection: without this, a 1M-document run held ~250 MB more.
                gc.collect()
                yield file.read(size)


@dataclass(frozen=True)
class Payload:
    """The request bodies of one dataset in one mode, encoded before any cluster starts."""

    dataset: str
    mode: str
    content_type: str
    primary_key: str
    documents: int
    docs_per_request: int
    size: int
    bodies: Bodies


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run ingest", description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=[*INGEST_DATASETS, "all"], default="all")
    parser.add_argument("--runs", type=int, default=3, help="fresh clusters per dataset and mode")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument(
        "--chunk-docs",
        type=int,
        help="documents per request in chunked mode; default "
        + ", ".join(f"{name} {docs}" for name, docs in DEFAULT_CHUNK_DOCS.items()),
    )
    parser.add_argument(
        "--docs",
        type=int,
        help="synthetic documents; default "
        + ", ".join(f"{docs} with --dataset {name}" for name, docs in DEFAULT_SYNTHETIC_DOCS.items()),
    )
    parser.add_argument("--seed", type=int, default=synthetic.DEFAULT_SEED, help="synthetic corpus seed")
    parser.add_argument("--json", type=Path, help="result file; default bench/results/ingest-<time>.json")
    args = parser.parse_args(argv)
    if args.runs < 1 or any(value is not None and value < 1 for value in (args.chunk_docs, args.docs)):
        parser.error("--runs, --chunk-docs and --docs must be positive")
    if args.docs is not None and args.dataset not in DEFAULT_SYNTHETIC_DOCS:
        parser.error("--docs applies to the synthetic corpus only")
    return args


def payloads(name: str, chunk_docs: int) -> dict[str, Payload]:
    """The dataset as one body and in chunks, with the same bytes per document in both modes.

    JSON is re-encoded compactly by orjson (the movies file is pretty-printed: 17 % of it is
    whitespace); NDJSON lines are sent as they are in the file.
    """
    file = DATASETS_DIR / DATASETS[name].path
    primary_key = DATASETS[name].primary_key
    content_type = _CONTENT_TYPES[file.suffix]
    raw = file.read_bytes()
    documents: list[Any]
    encode: Callable[[list[Any]], bytes]
    if file.suffix == ".json":
        documents, encode = orjson.loads(raw), orjson.dumps
    else:
        documents, encode = [line for line in raw.splitlines() if line.strip()], _ndjson

    def split(mode: str, size: int) -> Payload:
        bodies = tuple(encode(documents[i : i + size]) for i in range(0, len(documents), size))
        per_request = min(size, len(documents))
        total = sum(len(body) for body in bodies)
        return Payload(name, mode, content_type, primary_key, len(documents), per_request, total, bodies)

    return {"single": split("single", len(documents)), "chunked": split("chunked", chunk_docs)}


def _ndjson(lines: list[bytes]) -> bytes:
    return b"\n".join(lines) + b"\n"


def synthetic_payload(path: Path, documents: int, seed: int, chunk_docs: int) -> Payload:
    """Write the synthetic corpus to ``path`` in request-sized chunks; the payload reads them back."""
    with open(path, "wb") as out:
        sizes = tuple(synthetic.write_ndjson(out, documents, seed, chunk_docs))
    bodies = FileChunks(path, sizes)
    per_request = min(chunk_docs, documents)
    return Payload(
        "synthetic", "chunked", _CONTENT_TYPES[".ndjson"], "id", documents, per_request, sum(sizes), bodies
    )


def ingest_once(payload: Payload, shards: int) -> dict[str, Any]:
    """Send ``payload`` to a fresh cluster, wait for every task; timings, CPU, memory and disk use."""
    with (
        RunningCluster(shards=shards) as cluster,
        httpx.Client(base_url=cluster.url, timeout=300.0) as client,
    ):
        assert cluster.process is not None
        served = cluster_processes(cluster.process.pid)
        sampler = ProcessSampler({**served, "runner": os.getpid()}, total_of=served)
        sent = send_sampled(client, payload, sampler)
        disk = disk_usage(cluster.layout, shards)
    started_ns, first_202_ns, sent_ns, tasks = sent.started_ns, sent.first_202_ns, sent.sent_ns, sent.tasks
    window, figures = sent.window_s, sent.figures
    finished_ns = max(parse_ns(task["finishedAt"]) for task in tasks)
    index_s = (finished_ns - first_202_ns) / 1e9
    processes = {
        name: {
            "peak_rss_mib": f.peak_rss_mib,
            "hwm_mib": f.hwm_mib,
            "cpu_s": None if f.cpu_pct is None else round(f.cpu_pct * window / 100, 3),
        }
        for name, f in figures.items()
    }
    return {
        "first_202_s": round((first_202_ns - started_ns) / 1e9, 4),
        "sent_s": round((sent_ns - started_ns) / 1e9, 4),
        "index_s": round(index_s, 4),
        "total_s": round((finished_ns - started_ns) / 1e9, 4),
        "docs_per_s": round(payload.documents / index_s, 1),
        "mb_per_s": round(payload.size / _MB / index_s, 3),
        "batches": len({task["batchUid"] for task in tasks}),
        "disk_bytes": disk,
        "disk_ratio": round(disk["total"] / payload.size, 3),
        "shard_disk_ratio": round(disk["shards"] / payload.size, 3),
        "host_cpu_s": round(sampler.host_cpu_pct() * window / 100, 3),
        "cluster_peak_rss_mib": sampler.peak_total_mib(),
        "processes": processes,
    }


@dataclass(frozen=True)
class Sent:
    """One payload sent and indexed: wall-clock ns (comparable with the tasks' ``finishedAt``) of the
    start, the first 202 and the last one, the finished tasks, and the sampled window."""

    started_ns: int
    first_202_ns: int
    sent_ns: int
    tasks: list[dict[str, Any]]
    window_s: float
    figures: dict[str, ProcessFigures]


def send_sampled(client: httpx.Client, payload: Payload, sampler: ProcessSampler) -> Sent:
    """Post the payload, wait for every task; ``sampler`` runs around it, its window from the first
    request to the last task."""
    sampler.start()
    try:
        sampler.begin_window()
        started, started_ns = time.monotonic(), time.time_ns()
        first_202_ns, task_uids = post_bodies(client, payload)
        sent_ns = time.time_ns()
        deadline = time.monotonic() + _TASK_TIMEOUT
        tasks = [wait_for_task(client, uid, deadline) for uid in task_uids]
        sampler.end_window()
        window = time.monotonic() - started
    finally:
        figures = sampler.stop()
    return Sent(started_ns, first_202_ns, sent_ns, tasks, window, figures)


def post_bodies(client: httpx.Client, payload: Payload) -> tuple[int, list[int]]:
    """Post every body back to back, each waiting for its 202 only; the first 202's wall-clock time
    (ns, comparable with the tasks' ``finishedAt``) and the task uids."""
    path = f"/indexes/{payload.dataset}/documents"
    params = {"primaryKey": payload.primary_key}
    headers = {"Content-Type": payload.content_type}
    task_uids: list[int] = []
    first_202_ns = 0
    for body in payload.bodies:
        response = client.post(path, params=params, content=body, headers=headers)
        if response.status_code != 202:
            raise RuntimeError(f"{path} answered {response.status_code}: {response.text[:500]}")
        first_202_ns = first_202_ns or time.time_ns()
        task_uids.append(int(response.json()["taskUid"]))
    return first_202_ns, task_uids


def disk_usage(layout: DataLayout, shards: int) -> dict[str, int]:
    """Bytes on disk of the whole data directory, of all shards and of each process's own directory."""
    parts = {"total": layout.root, "shards": layout.shard_dir(0).parent, "scheduler": layout.scheduler_dir}
    parts |= {f"shard-{k}": layout.shard_dir(k) for k in range(shards)}
    return {name: _bytes_on_disk(path) for name, path in parts.items()}


def _bytes_on_disk(root: Path) -> int:
    """Allocated blocks (as ``du``) of ``root`` and everything under it: sparse files count what they use."""
    return sum(path.lstat().st_blocks * 512 for path in [root, *root.rglob("*")])


def parse_ns(text: str) -> int:
    """Nanoseconds since the epoch from the contract's RFC 3339 (``...T17:54:06.59621794Z``)."""
    whole, _, fraction = text.removesuffix("Z").partition(".")
    seconds = int(datetime.fromisoformat(whole + "+00:00").timestamp())
    return seconds * 1_000_000_000 + int(fraction.ljust(9, "0")[:9])


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    """Every run of every dataset and mode, interleaved (run 1 of all, then run 2, ...)."""
    names = INGEST_DATASETS if args.dataset == "all" else (args.dataset,)
    chunk_docs = {name: args.chunk_docs or DEFAULT_CHUNK_DOCS[name] for name in names}
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    options: dict[str, Any] = {
        "shards": args.shards,
        "runs": args.runs,
        "datasets": list(names),
        "chunk_docs": chunk_docs,
    }
    with tempfile.TemporaryDirectory(prefix="sift-ingest-") as scratch:
        loads = [
            p for name in names if name != "synthetic" for p in payloads(name, chunk_docs[name]).values()
        ]
        if "synthetic" in names:
            docs = args.docs or DEFAULT_SYNTHETIC_DOCS[args.dataset]
            print(f"generating {docs} synthetic documents ...", file=sys.stderr, flush=True)
            generating = time.monotonic()
            path = Path(scratch) / "synthetic.ndjson"
            loads.append(synthetic_payload(path, docs, args.seed, chunk_docs["synthetic"]))
            generate_s = round(time.monotonic() - generating, 2)
            options["synthetic"] = {"docs": docs, "seed": args.seed, "generate_s": generate_s}
        runs: list[list[dict[str, Any]]] = [[] for _ in loads]
        for k in range(1, args.runs + 1):
            for payload, results in zip(loads, runs, strict=True):
                print(
                    f"run {k}/{args.runs}, {payload.dataset} {payload.mode} ...", file=sys.stderr, flush=True
                )
                results.append(ingest_once(payload, args.shards))
    return {
        "scenario": "ingest",
        "description": "a whole dataset into a fresh cluster, as one request and as chunks sent back to back",
        "started_at": started_at,
        "options": options,
        "environment": environment,
        "results": [
            {
                "dataset": payload.dataset,
                "mode": payload.mode,
                "content_type": payload.content_type,
                "requests": len(payload.bodies),
                "documents": payload.documents,
                "docs_per_request": payload.docs_per_request,
                "payload_bytes": payload.size,
                "median": summarize(results),
                "runs": results,
            }
            for payload, results in zip(loads, runs, strict=True)
        ],
    }


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median of each figure over runs, per key (so one median row may mix runs)."""
    median: dict[str, Any] = {key: _median([run[key] for run in runs]) for key in _SCALAR_KEYS}
    median["disk_bytes"] = {
        part: _median([run["disk_bytes"][part] for run in runs]) for part in runs[0]["disk_bytes"]
    }
    median["processes"] = {
        name: {key: _median([run["processes"][name][key] for run in runs]) for key in figures}
        for name, figures in runs[0]["processes"].items()
    }
    return median


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.median(present), 4) if present else None


def render(report: dict[str, Any]) -> str:
    options, env, results = report["options"], report["environment"], report["results"]
    w = max(len(_label(result)) for result in results)
    lines = [
        f"{report['scenario']}: {report['description']}",
        f"shards={options['shards']} runs={options['runs']} chunk docs={options['chunk_docs']} | "
        f"python {env['python']}, {env['cpus']} CPUs, commit {env['commit']}, "
        f"load avg {env['loadavg_before']:.2f} before start",
    ]
    if "synthetic" in options:
        corpus = options["synthetic"]
        lines.append(
            f"synthetic: {corpus['docs']} docs, seed {corpus['seed']}, generated in {corpus['generate_s']} s"
        )
    lines += [
        "",
        f"{'load':<{w}}  {'run':<6} {'1st 202 s':>9} {'index s':>8} {'total s':>8} {'docs/s':>9} "
        f"{'MB/s':>7} {'batches':>7} {'disk/raw':>8} {'shards/raw':>10}",
    ]
    for result in results:
        rows = [("median", result["median"])] + [(str(k), r) for k, r in enumerate(result["runs"], 1)]
        for label, row in rows:
            lines.append(
                f"{_label(result):<{w}}  {label:<6} {row['first_202_s']:>9.3f} {row['index_s']:>8.3f} "
                f"{row['total_s']:>8.3f} {row['docs_per_s']:>9.0f} {row['mb_per_s']:>7.2f} "
                f"{row['batches']:>7g} {row['disk_ratio']:>8.2f} {row['shard_disk_ratio']:>10.2f}"
            )
    names = list(results[0]["median"]["processes"])
    lines += [
        "",
        "VmHWM MiB (peak RSS since the process started), median of runs",
        "(sum = of the cluster's processes, runner excluded; at once = largest sampled sum of their VmRSS)",
        f"{'load':<{w}}" + "".join(f"{name:>10}" for name in [*names, "sum", "at once"]),
    ]
    for result in results:
        median = result["median"]
        hwm = [median["processes"][n]["hwm_mib"] for n in names]
        total = sum(h for n, h in zip(names, hwm, strict=True) if h is not None and n != "runner")
        cells = [*hwm, total, median["cluster_peak_rss_mib"]]
        lines.append(f"{_label(result):<{w}}" + "".join(_cell(c, 1) for c in cells))
    lines += [
        "",
        "CPU seconds from the first request to the last task, median of runs",
        "(host = whole machine, other = host minus the processes listed)",
        f"{'load':<{w}}" + "".join(f"{name:>10}" for name in [*names, "host", "other"]),
    ]
    for result in results:
        median = result["median"]
        cpu = [median["processes"][n]["cpu_s"] for n in names]
        other = median["host_cpu_s"] - sum(c for c in cpu if c is not None)
        lines.append(
            f"{_label(result):<{w}}" + "".join(_cell(c, 2) for c in [*cpu, median["host_cpu_s"], other])
        )
    parts = list(results[0]["median"]["disk_bytes"])
    lines += [
        "",
        "bytes on disk after indexing / raw payload bytes, median of runs",
        f"{'load':<{w}}{'raw MB':>10}" + "".join(f"{part:>10}" for part in parts),
    ]
    for result in results:
        disk = result["median"]["disk_bytes"]
        ratios = [disk[part] / result["payload_bytes"] for part in parts]
        lines.append(
            f"{_label(result):<{w}}{_cell(result['payload_bytes'] / _MB, 2)}"
            + "".join(_cell(r, 2) for r in ratios)
        )
    return "\n".join(lines)


def _label(result: dict[str, Any]) -> str:
    """``cities chunked 18x10000``: dataset, mode, requests x documents per request."""
    return f"{result['dataset']} {result['mode']} {result['requests']}x{result['docs_per_request']}"


def _cell(value: float | None, digits: int) -> str:
    """Ten characters wide, right-aligned; ``-`` for a process that was gone."""
    return f"{'-' if value is None else f'{value:.{digits}f}':>10}"
