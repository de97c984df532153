"""``python -m bench.run snapshots``: snapshot time and size on cities (171k documents), with and without
compaction, Sift beside the reference engine in the same run.

Each engine loads the dataset once and replaces every document ``--rewrites`` times (copy-on-write
leaves free pages, which compaction leaves out); it is then started with LMDB compaction of snapshots
(the default) and again on the same data with ``--experimental-no-snapshot-compaction``, and takes ``--runs``
snapshots each time (``POST /snapshots``); the reference 1.50 refuses that flag, so it is measured in
its default mode only. Figures per engine and mode (medians): the task's duration,
the request-to-finished time, the snapshot file's size, and the data directory's stores for scale.
For Sift, the time to launch a new cluster with ``--import-snapshot`` of the compacted snapshot up to
healthy is measured too (``import``); the reference's import is not, as its start-up differs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.datasets import DATASETS, add_documents, load
from bench.reference import running_reference
from tests.support.cluster import RunningCluster
from tests.support.crash.api import wait_task

INDEX = "cities"
MODES = {"compacted": (), "not compacted": ("--experimental-no-snapshot-compaction",)}


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run snapshots", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--dataset", default="cities", choices=sorted(DATASETS))
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="snapshots per engine and mode")
    parser.add_argument(
        "--rewrites", type=int, default=1, help="times every document is replaced after the load (free pages)"
    )
    parser.add_argument("--no-reference", action="store_true", help="measure Sift alone")
    parser.add_argument("--json", type=Path, help="result file; default bench/results/snapshots-<time>.json")
    return parser.parse_args(argv)


def _seconds(duration: str) -> float:
    return float(duration.removeprefix("PT").removesuffix("S"))


def _tree_bytes(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*.mdb") if path.is_file())


def _snapshots(url: str, snapshot: Path, runs: int) -> list[dict[str, float]]:
    """``runs`` snapshots one after the other: task duration, request to finished, file size."""
    measured = []
    with httpx.Client(base_url=url, timeout=120) as client:
        for _ in range(runs):
            started = time.monotonic()
            task = wait_task(client, client.post("/snapshots").json()["taskUid"], timeout=1800)
            elapsed = time.monotonic() - started
            assert task["status"] == "succeeded", task
            measured.append(
                {"task_s": _seconds(task["duration"]), "wall_s": elapsed, "bytes": snapshot.stat().st_size}
            )
    return measured


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {name: statistics.median(run[name] for run in runs) for name in runs[0]}


def _engine(
    start: Callable[[Path, Path, tuple[str, ...]], Any],
    scratch: Path,
    dataset: str,
    runs: int,
    rewrites: int,
    modes: tuple[str, ...] = tuple(MODES),
) -> dict[str, Any]:
    """Load once, then snapshot in each mode; ``start(db, snapshots, options)`` is a context giving a URL."""
    db, snapshots = scratch / "data.ms", scratch / "snapshots"
    result: dict[str, Any] = {}
    for number, mode in enumerate(modes):
        options = MODES[mode]
        with start(db, snapshots, options) as url:
            if number == 0:
                started = time.monotonic()
                load(url, INDEX, dataset)
                result["load_s"] = time.monotonic() - started
                for rewrite in range(rewrites):
                    documents = (
                        {**document, "rewrite": rewrite} for document in DATASETS[dataset].documents()
                    )
                    add_documents(url, INDEX, documents, DATASETS[dataset].primary_key)
            result["stores_bytes"] = _tree_bytes(db)
            result[mode] = _median(_snapshots(url, snapshots / "data.ms.snapshot", runs))
            print(f"{db.parent.name} {mode}: {result[mode]}", file=sys.stderr, flush=True)
    return result


class _Sift:
    def __init__(self, shards: int) -> None:
        self.shards = shards
        self.cluster: RunningCluster | None = None

    def __call__(self, db: Path, snapshots: Path, options: tuple[str, ...]) -> _Sift:
        self.cluster = RunningCluster(
            "--snapshot-dir", str(snapshots), *options, shards=self.shards, data_dir=db
        )
        return self

    def __enter__(self) -> str:
        assert self.cluster is not None
        return self.cluster.start(timeout=300).url

    def __exit__(self, *_: object) -> None:
        assert self.cluster is not None
        self.cluster.stop()


def _import_seconds(snapshot: Path, shards: int, scratch: Path) -> float:
    started = time.monotonic()
    with RunningCluster("--import-snapshot", str(snapshot), shards=shards, data_dir=scratch / "imported.ms"):
        return time.monotonic() - started


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    report: dict[str, Any] = {
        "scenario": "snapshots",
        "environment": environment,
        "dataset": args.dataset,
        "rewrites": args.rewrites,
    }
    with tempfile.TemporaryDirectory(prefix="bench-snapshots-") as scratch_name:
        scratch = Path(scratch_name)
        (scratch / "sift").mkdir()
        report["sift"] = _engine(_Sift(args.shards), scratch / "sift", args.dataset, args.runs, args.rewrites)
        # The last snapshot of the loop above is the uncompacted one: take a compacted one to import.
        with _Sift(args.shards)(scratch / "sift" / "data.ms", scratch / "sift" / "snapshots", ()) as url:
            _snapshots(url, scratch / "sift" / "snapshots" / "data.ms.snapshot", 1)
        snapshot = scratch / "sift" / "snapshots" / "data.ms.snapshot"
        report["sift"]["import_s"] = _import_seconds(snapshot, args.shards, scratch / "sift")
        if not args.no_reference:
            (scratch / "reference").mkdir()

            def reference(db: Path, snapshots: Path, options: tuple[str, ...]) -> Any:
                return running_reference(data_dir=db, options=("--snapshot-dir", str(snapshots), *options))

            # The reference 1.50 refuses --experimental-no-snapshot-compaction: its default mode only.
            report["reference"] = _engine(
                reference, scratch / "reference", args.dataset, args.runs, args.rewrites, ("compacted",)
            )
    return report


def render(report: dict[str, Any]) -> str:
    lines = [
        f"snapshots of {report['dataset']}, every document replaced {report['rewrites']} times after the load"
        " (medians)",
        f"{'engine':<10} {'mode':<14} {'task s':>8} {'wall s':>8} {'file MB':>9} {'stores MB':>10}",
    ]
    for engine in ("sift", "reference"):
        if engine not in report:
            continue
        figures = report[engine]
        for mode in (mode for mode in MODES if mode in figures):
            m = figures[mode]
            lines.append(
                f"{engine:<10} {mode:<14} {m['task_s']:>8.2f} {m['wall_s']:>8.2f} {m['bytes'] / 1e6:>9.1f} "
                f"{figures['stores_bytes'] / 1e6:>10.1f}"
            )
        lines.append(f"{engine:<10} load {figures['load_s']:.1f} s")
    if "import_s" in report.get("sift", {}):
        lines.append(f"sift: launch with --import-snapshot to healthy {report['sift']['import_s']:.1f} s")
    return "\n".join(lines)
