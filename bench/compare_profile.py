"""``--profile CLASS`` of ``bench.run compare``: py-spy on every Sift process while a class runs.

Each process (gateway, scheduler, every shard; not the idle launcher) is recorded with ``py-spy record
--nonblocking --rate 200 --format raw`` for ``--duration`` seconds while ``wrk`` drives the class at
the highest concurrency. The collapsed stacks go to
``bench/results/profile-compare-<dataset>-<class>-<process>-<time>.txt`` (flamegraph.pl or
https://www.speedscope.app input); the report keeps each process's functions most often on top of
the stack (``self``) and anywhere on it (``total``), as ``bench.profiling.top_frames`` counts them, and
two cuts of ``where``: by the top frame's package, and by the deepest frame of Sift's own code.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from functools import cache
from typing import TYPE_CHECKING, Any

import orjson

from bench import wrk
from bench.loadgen import REPO_ROOT, Request
from bench.profiling import collect, py_spy, record, stacks, top_frames
from bench.run import RESULTS_DIR

if TYPE_CHECKING:
    from bench.compare import Engine

_JSON = (("Content-Type", "application/json"),)
_PROJECT = ("shard/", "gateway/", "common/", "scheduler/", "sift/")
_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>.*?)(?::\d+)?\)$")


def profile_class(
    engine: Engine,
    dataset: str,
    name: str,
    bodies: list[dict[str, Any]],
    concurrency: int,
    args: argparse.Namespace,
    stamp: str,
) -> dict[str, Any]:
    """Load ``engine`` with the class for ``args.duration`` s + 1 while py-spy samples each process."""
    spy = py_spy()
    if spy is None:
        return {"error": "py-spy not found beside the interpreter or on PATH (.venv/bin/pip install py-spy)"}
    print(f"profiling {dataset} {name} at {concurrency} clients ...", file=sys.stderr, flush=True)
    pids = {process: pid for process, pid in engine.pids().items() if process != "launcher"}
    requests = tuple(
        Request("POST", f"/indexes/{dataset}/search", orjson.dumps(body), _JSON) for body in bodies
    )
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    label = f"profile-compare-{dataset}-{name}"
    recorders = record(spy, pids, args.duration, lambda proc: RESULTS_DIR / f"{label}-{proc}-{stamp}.txt")
    # The load covers py-spy's window: it starts before py-spy has attached and ends a second after.
    load = wrk.run(engine.url, requests, concurrency, args.duration + 1)
    found: dict[str, Any] = {"load": {key: load[key] for key in ("concurrency", "rps", "p50_ms")}}
    return found | collect(recorders, lambda collapsed: top_frames(collapsed) | where(collapsed))


def where(collapsed: str, top: int = 12) -> dict[str, Any]:
    """Two cuts of py-spy's collapsed stacks, in % of samples.

    ``areas``: the top frame's package (``grpc``, ``asyncio``, ``shard/query``...): where the CPU is.
    ``ours``: the deepest frame of Sift's own code on the stack (libraries it called counted to it),
    or ``(no Sift frame)``: which of our functions the time is spent for.
    """
    areas: Counter[str] = Counter()
    ours: Counter[str] = Counter()
    samples = 0
    for raw, count in stacks(collapsed):
        frames = [_parse(frame) for frame in raw]
        samples += count
        areas[_area(frames[-1][1])] += count
        own = [f"{function} ({file})" for function, file in frames if _is_ours(file)]
        ours[own[-1] if own else "(no Sift frame)"] += count
    if not samples:
        return {}
    return {
        "areas_pct": [(area, round(100 * n / samples, 1)) for area, n in areas.most_common(top)],
        "ours_pct": [(frame, round(100 * n / samples, 1)) for frame, n in ours.most_common(top)],
    }


def _parse(frame: str) -> tuple[str, str]:
    """(function, file), the file as a path from the repository root when it is one of ours: py-spy
    shortens some of our paths to the bare file name (``positional.py``)."""
    matched = _FRAME.match(frame)
    if not matched:
        return frame, ""
    file = matched["file"]
    return matched["function"], _our_files().get(file, file)


@cache
def _our_files() -> dict[str, str]:
    """Sift's file names that are unique in the repository, to their path from its root."""
    paths = [path for top in _PROJECT for path in (REPO_ROOT / top).rglob("*.py")]
    names = Counter(path.name for path in paths)
    return {path.name: str(path.relative_to(REPO_ROOT)) for path in paths if names[path.name] == 1}


def _is_ours(file: str) -> bool:
    return file.startswith(_PROJECT)


def _area(file: str) -> str:
    """``shard/query`` for Sift's files, the package or module for others (py-spy shortens paths to
    what follows their ``sys.path`` entry: ``grpc/aio/_call.py``, ``asyncio/events.py``)."""
    if _is_ours(file):
        return "/".join(file.split("/")[:2])
    return file.rsplit("site-packages/", 1)[-1].split("/", 1)[0].removesuffix(".py") or "?"


def render_profiles(dataset: str, profiles: dict[str, Any], top: int = 8) -> list[str]:
    """Per profiled class and process: samples, the file, and the three cuts (packages, self, ours)."""
    lines: list[str] = []
    for name, found in profiles.items():
        if "error" in found:
            lines += [f"profile of {dataset} {name}: {found['error']}"]
            continue
        load = found["load"]
        lines.append(
            f"profile of {dataset} {name} at {load['concurrency']} clients "
            f"({load['rps']:.0f} req/s under py-spy)"
        )
        for process, figures in found.items():
            if process == "load":
                continue
            if "samples" not in figures:  # py-spy failed, or the process was idle throughout
                lines.append(f"  {process}: {figures.get('error', 'no samples')}")
                continue
            lines.append(f"  {process}: {figures['samples']} samples, {figures['file']}")
            areas = ", ".join(f"{area} {share:.0f}%" for area, share in figures["areas_pct"][:top])
            lines.append(f"    top of stack by package: {areas}")
            lines.append("    self    function (top of stack)")
            lines += [f"    {share:>5.1f}%  {frame}" for frame, share in figures["self_pct"][:top]]
            lines.append("    spent for (deepest Sift frame)")
            lines += [f"    {share:>5.1f}%  {frame}" for frame, share in figures["ours_pct"][:top]]
    return lines
