"""``--profile CLASS`` of ``bench.run search``: py-spy samples of ``shard-0`` and the gateway under a
class's load, written as collapsed stacks (flamegraph.pl / speedscope input), plus their top functions."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from bench.loadgen import LoadSpec
from bench.procstat import cluster_processes
from bench.run import RESULTS_DIR, measure

_PROFILED = ("shard-0", "gateway")
_TOP_FRAMES = 12


def py_spy() -> str | None:
    """py-spy beside this interpreter (the venv) or on ``PATH``."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


def profile(launcher_pid: int, spec: LoadSpec, label: str, stamp: str) -> dict[str, Any]:
    """Sample ``shard-0`` and the gateway with py-spy while ``spec`` runs; collapsed stacks and top frames.

    ``--nonblocking`` reads the processes without pausing them, so the profiled run keeps its pace
    (at the price of an occasional torn stack).
    """
    spy = py_spy()
    if spy is None:
        return {"error": "py-spy not found beside the interpreter or on PATH (.venv/bin/pip install py-spy)"}
    pids = cluster_processes(launcher_pid)
    seconds = max(1, math.floor(spec.duration))
    recorders = {}
    for name in _PROFILED:
        output = RESULTS_DIR / f"profile-{label}-{name}-{stamp}.txt"
        command = [spy, "record", "--pid", str(pids[name]), "--duration", str(seconds), "--rate", "200"]
        command += ["--format", "raw", "--nonblocking", "--output", str(output)]
        recorders[name] = (
            output,
            subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE),
        )
    # The load covers py-spy's window: it starts before py-spy has attached and ends a second after.
    result = measure(
        LoadSpec(spec.host, spec.port, spec.concurrency, 0.0, seconds + 1.0, spec.requests), pids
    )
    profiles: dict[str, Any] = {"load": {key: result[key] for key in ("concurrency", "rps", "p50_ms")}}
    for name, (output, recorder) in recorders.items():
        _, stderr = recorder.communicate(timeout=60)
        if recorder.returncode != 0 or not output.exists():
            profiles[name] = {"error": stderr.decode(errors="replace").strip()[-500:]}
        else:
            profiles[name] = {"file": str(output), **top_frames(output.read_text())}
    return profiles


def top_frames(collapsed: str, top: int = _TOP_FRAMES) -> dict[str, Any]:
    """Samples and the functions that take the most of them, from py-spy's raw (collapsed) stacks.

    ``self``: the function was on top of the stack; ``total``: anywhere on it. Line numbers are
    dropped so a function's lines add up.
    """
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in collapsed.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = [_function(frame) for frame in stack.split(";")]
        samples += count
        own[frames[-1]] += count
        for frame in set(frames):
            total[frame] += count

    def shares(counter: Counter[str]) -> list[tuple[str, float]]:
        return [(frame, round(100 * n / samples, 1)) for frame, n in counter.most_common(top)]

    return {"samples": samples, "self_pct": shares(own), "total_pct": shares(total)} if samples else {}


def _function(frame: str) -> str:
    """``search (shard/query/search.py:52)`` -> ``search (shard/query/search.py)``."""
    name, _, where = frame.partition(" (")
    return f"{name} ({where.rsplit(':', 1)[0]})" if where else name


def render_profile(profiled: dict[str, Any]) -> list[str]:
    load = profiled.get("load", {})
    lines = [
        f"profile of {profiled['class']}"
        + (f" at {load['concurrency']} clients ({load['rps']:.0f} req/s under py-spy)" if load else "")
    ]
    if "error" in profiled:
        return [*lines, f"  {profiled['error']}"]
    for name in _PROFILED:
        figures = profiled[name]
        if "error" in figures or not figures:
            lines.append(f"{name}: py-spy failed: {figures.get('error', 'no samples')}")
            continue
        lines.append(f"{name}: {figures['samples']} samples, collapsed stacks in {figures['file']}")
        lines.append(f"  {'self %':>6}  function (top of stack)")
        lines += [f"  {share:>6.1f}  {frame}" for frame, share in figures["self_pct"]]
    return lines
