"""``python -m bench.run dumps``: dump and import time and size on cities (171k documents).

One fresh cluster loads cities, then ``POST /dumps`` is timed ``--runs`` times (the task's own
duration, and the dump file's size against ``cities.ndjson``); the last dump is then imported
``--import-runs`` times into fresh clusters (``sift serve --import-dump``, timed from launch to the first
``/health`` answer, the whole import being done before it: documents per second). With
``--reference``, the reference engine does the same in the same run: load, dump, import.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.datasets import DATASETS, load
from bench.loadgen import REPO_ROOT
from bench.reference import ARCHIVE, running_reference
from tests.support.cluster import RunningCluster

INDEX = "cities"
RAW = REPO_ROOT.parent / "shared" / "datasets" / DATASETS["cities"].path


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run dumps", description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="dumps timed (median shown)")
    parser.add_argument("--import-runs", type=int, default=1, help="imports timed (median shown)")
    parser.add_argument("--reference", action="store_true", help="also the reference engine, same run")
    parser.add_argument("--json", type=Path, help="result file; default bench/results/dumps-<time>.json")
    return parser.parse_args(argv)


def _seconds(duration: str) -> float:
    return float(duration.removeprefix("PT").removesuffix("S"))


def _dump(url: str, dump_dir: Path) -> tuple[float, Path]:
    """``POST /dumps`` until done: the task's duration and the file."""
    with httpx.Client(base_url=url, timeout=60) as client:
        uid = client.post("/dumps").json()["taskUid"]
        while (task := client.get(f"/tasks/{uid}").json())["status"] not in ("succeeded", "failed"):
            time.sleep(0.05)
    assert task["status"] == "succeeded", task
    return _seconds(task["duration"]), dump_dir / f"{task['details']['dumpUid']}.dump"


def _sift(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    dump_dir = scratch / "sift-dumps"
    with RunningCluster("--dump-dir", str(dump_dir), shards=args.shards) as cluster:
        load(cluster.url, INDEX, "cities")
        dumps = [_dump(cluster.url, dump_dir) for _ in range(args.runs)]
    dump = dumps[-1][1]
    imports = []
    for _ in range(args.import_runs):
        started = time.monotonic()
        imported = RunningCluster("--import-dump", str(dump), shards=args.shards)
        try:
            imported.start(timeout=1800)  # the import is done before the first /health answer
            imports.append(time.monotonic() - started)
            count = httpx.get(f"{imported.url}/indexes/{INDEX}/stats").json()["numberOfDocuments"]
        finally:
            imported.__exit__(None, None, None)
    return _figures([seconds for seconds, _ in dumps], dump.stat().st_size, imports, count)


def _reference(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    dump_dir = scratch / "reference-dumps"
    with running_reference(ARCHIVE, None, ("--dump-dir", str(dump_dir))) as url:
        load(url, INDEX, "cities")
        dumps = [_dump(url, dump_dir) for _ in range(args.runs)]
    dump = dumps[-1][1]
    imports = []
    for run in range(args.import_runs):
        started = time.monotonic()
        options = ("--import-dump", str(dump))
        with running_reference(ARCHIVE, scratch / f"reference-import-{run}", options, timeout=1800) as url:
            imports.append(time.monotonic() - started)
            count = httpx.get(f"{url}/indexes/{INDEX}/stats").json()["numberOfDocuments"]
    return _figures([seconds for seconds, _ in dumps], dump.stat().st_size, imports, count)


def _figures(dumps: list[float], size: int, imports: list[float], count: int | None) -> dict[str, Any]:
    documents = sum(1 for _ in DATASETS["cities"].documents())
    median_import = statistics.median(imports)
    return {
        "dump_s": statistics.median(dumps),
        "dump_runs_s": dumps,
        "dump_bytes": size,
        "raw_bytes": RAW.stat().st_size,
        "size_ratio": size / RAW.stat().st_size,
        "import_s": median_import,
        "import_runs_s": imports,
        "import_docs_per_s": documents / median_import,
        "imported_documents": count,
    }


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sift-bench-dumps-") as scratch:
        report: dict[str, Any] = {
            "scenario": "dumps",
            "environment": environment,
            "shards": args.shards,
            "runs": args.runs,
            "import_runs": args.import_runs,
        }
        report["sift"] = _sift(args, Path(scratch))
        if args.reference:
            report["reference"] = _reference(args, Path(scratch))
    return report


def render(report: dict[str, Any]) -> str:
    lines = [
        f"cities ({RAW.stat().st_size / 1e6:.1f} MB NDJSON), {report['shards']} shards,"
        f" median of {report['runs']} dumps and {report['import_runs']} imports",
        "engine     dump s  dump MB  dump/raw  import s  import docs/s",
    ]
    for engine in ("sift", "reference"):
        if engine in report:
            f = report[engine]
            lines.append(
                f"{engine:<9} {f['dump_s']:7.2f} {f['dump_bytes'] / 1e6:8.1f} {f['size_ratio']:9.3f}"
                f" {f['import_s']:9.1f} {f['import_docs_per_s']:14.0f}"
            )
    return "\n".join(lines)
