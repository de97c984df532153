"""``--profile CLASS`` of ``bench.run search``: py-spy samples of ``shard-0`` and the gateway under a
class's load, written as collapsed stacks (flamegraph.pl / speedscope input), plus their top functions."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
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
    """Sample ``shard-0`` and the gateway with py-spy while ``spec`` runs; collapsed stacks and top frames."""
    spy = py_spy()
    if spy is None:
        return {"error": "py-spy not found beside the interpreter or on PATH (.venv/bin/pip install py-spy)"}
    pids = cluster_processes(launcher_pid)
    seconds = max(1, math.floor(spec.duration))
    recorders = record(
        spy,
        {name: pids[name] for name in _PROFILED},
        seconds,
        lambda name: RESULTS_DIR / f"profile-{label}-{name}-{stamp}.txt",
    )
    # The load covers py-spy's window: it starts before py-spy has attached and ends a second after.
    result = measure(
        LoadSpec(spec.host, spec.port, spec.concurrency, 0.0, seconds + 1.0, spec.requests), pids
    )
    profiles: dict[str, Any] = {"load": {key: result[key] for key in ("concurrency", "rps", "p50_ms")}}
    return profiles | collect(recorders, top_frames)


Recorders = dict[str, tuple[Path, "subprocess.Popen[bytes]"]]


def record(spy: str, pids: dict[str, int], seconds: int, output: Callable[[str], Path]) -> Recorders:
    """py-spy started on each named process for ``seconds``, writing collapsed stacks to ``output(name)``.

    ``--nonblocking`` reads the processes without pausing them, so the profiled run keeps its pace
    (at the price of an occasional torn stack).
    """
    recorders: Recorders = {}
    for name, pid in pids.items():
        command = [spy, "record", "--pid", str(pid), "--duration", str(seconds), "--rate", "200"]
        command += ["--format", "raw", "--nonblocking", "--output", str(output(name))]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        recorders[name] = (output(name), process)
    return recorders


def collect(recorders: Recorders, analyse: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """Each recorder's file and ``analyse`` of its stacks once it has finished, or its error."""
    found: dict[str, Any] = {}
    for name, (output, recorder) in recorders.items():
        _, stderr = recorder.communicate(timeout=60)
        if recorder.returncode != 0 or not output.exists():
            found[name] = {"error": stderr.decode(errors="replace").strip()[-500:]}
        else:
            found[name] = {"file": str(output), **analyse(output.read_text())}
    return found


def top_frames(collapsed: str, top: int = _TOP_FRAMES) -> dict[str, Any]:
    """Samples and the functions that take the most of them, from py-spy's raw (collapsed) stacks.

    ``self``: the function was on top of the stack; ``total``: anywhere on it. Line numbers are
    dropped so a function's lines add up.
    """
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for raw, count in stacks(collapsed):
        frames = [_function(frame) for frame in raw]
        samples += count
        own[frames[-1]] += count
        for frame in set(frames):
            total[frame] += count

    def shares(counter: Counter[str]) -> list[tuple[str, float]]:
        return [(frame, round(100 * n / samples, 1)) for frame, n in counter.most_common(top)]

    return {"samples": samples, "self_pct": shares(own), "total_pct": shares(total)} if samples else {}


def stacks(collapsed: str) -> Iterator[tuple[list[str], int]]:
    """Each line of py-spy's raw output as (frames from the root, samples). A frame whose name py-spy
    read with a line break in it (seen: a module docstring) splits its stack over lines, which
    are skipped: they have no count at their end."""
    for line in collapsed.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if stack and count_text.isdigit():
            yield stack.split(";"), int(count_text)


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
