"""``--profile CLASS`` of ``bench.run compare``: py-spy on every Sift process while a class runs.

Each process (gateway, scheduler, every shard; not the idle launcher) is recorded with ``py-spy record
--nonblocking --rate 200 --format raw`` for ``--duration`` seconds while ``wrk`` drives the class at
the highest concurrency. The collapsed stacks go to
``bench/results/profile-compare-<dataset>-<class>-<process>-<time>.txt`` (flamegraph.pl or
https://www.speedscope.app input); the report keeps each process's functions most often on top of
the stack (``self``) and anywhere on it (``total``), as ``bench.profiling.top_frames`` counts them.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import orjson

from bench import wrk
from bench.loadgen import Request
from bench.profiling import py_spy, top_frames
from bench.run import RESULTS_DIR

if TYPE_CHECKING:
    from bench.compare import Engine

_JSON = (("Content-Type", "application/json"),)


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
    recorders = {}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    for process, pid in pids.items():
        output = RESULTS_DIR / f"profile-compare-{dataset}-{name}-{process}-{stamp}.txt"
        command = [spy, "record", "--pid", str(pid), "--duration", str(args.duration), "--rate", "200"]
        command += ["--format", "raw", "--nonblocking", "--output", str(output)]
        recorders[process] = (
            output,
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE),
        )
    # The load covers py-spy's window: it starts before py-spy has attached and ends a second after.
    load = wrk.run(engine.url, requests, concurrency, args.duration + 1)
    found: dict[str, Any] = {"load": {key: load[key] for key in ("concurrency", "rps", "p50_ms")}}
    for process, (output, recorder) in recorders.items():
        _, stderr = recorder.communicate(timeout=60)
        if recorder.returncode != 0 or not output.exists():
            found[process] = {"error": stderr.decode(errors="replace").strip()[-500:]}
        else:
            found[process] = {"file": str(output), **top_frames(output.read_text())}
    return found


def render_profiles(dataset: str, profiles: dict[str, Any], top: int = 8) -> list[str]:
    """Per profiled class and process: samples, the file, and the top functions by self share."""
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
            if "error" in figures or not figures:
                lines.append(f"  {process}: py-spy failed: {figures.get('error', 'no samples')}")
                continue
            lines.append(f"  {process}: {figures['samples']} samples, {figures['file']}")
            lines += [f"    {share:>5.1f}%  {frame}" for frame, share in figures["self_pct"][:top]]
    return lines
