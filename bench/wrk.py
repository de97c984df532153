"""Closed-loop load through ``wrk`` (Debian's 4.1), for runs where the client must cost the servers least.

``bench/loadgen.py`` spends about 50 µs of Python per request; ``wrk`` (C, one epoll thread) a few µs,
which matters beside an engine answering thousands of requests a second on the same two cores. The
requests are written into a Lua script that formats each once in ``init`` and hands them out in turn
from ``request`` (client *k* of ``bench/loadgen.py`` starts at entry *k*; here one thread serves every
connection from one shared cursor, so concurrent requests are consecutive entries). ``done`` prints the
figures as one JSON line. ``wrk`` runs with one thread pinned to the last CPU (``taskset``), so it does
not hop between the cores the servers use, and its own CPU shows apart in ``/proc``.

``wrk`` takes whole seconds, has no warm-up of its own (``run`` starts an unmeasured one first) and
counts a response slower than ``--timeout`` as an error, not a latency: the timeout is set far above
any expected answer.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from bench.loadgen import Request

_TIMEOUT_S = 60
_MARK = "WRK-JSON "
_DONE = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '%s{"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,'
    .. '"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\\n',
    "%MARK%", summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
"""


def available() -> str | None:
    """The ``wrk`` binary on ``PATH``, or None."""
    return shutil.which("wrk")


def script(requests: Sequence[Request]) -> str:
    """A Lua script cycling through ``requests`` (each formatted once, in ``init``)."""

    def quoted(text: str) -> str:
        level = "="
        while f"]{level}]" in text:
            level += "="
        return f"[{level}[{text}]{level}]"

    entries = []
    for request in requests:
        headers = ", ".join(f"[ {quoted(name)} ] = {quoted(value)}" for name, value in request.headers)
        body = quoted(request.body.decode()) if request.body else "nil"
        entries.append(f"  {{{quoted(request.method)}, {quoted(request.path)}, {{{headers}}}, {body}}},")
    return "\n".join(
        [
            "local entries = {",
            *entries,
            "}",
            "local formatted = {}",
            "local cursor = 0",
            "init = function(args)",
            "  for k, e in ipairs(entries) do formatted[k] = wrk.format(e[1], e[2], e[3], e[4]) end",
            "end",
            "request = function()",
            "  cursor = cursor % #formatted + 1",
            "  return formatted[cursor]",
            "end",
            _DONE.replace("%MARK%", _MARK),
        ]
    )


def run(
    url: str,
    requests: Sequence[Request],
    connections: int,
    duration: float,
    warmup: float = 0.0,
    on_start: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Load ``url`` with ``connections`` clients for ``duration`` s (whole seconds, at least 1) after an
    unmeasured ``warmup``; ``on_start(pid)`` is called once the measured ``wrk`` is started (to sample it).

    Returns req/s, latency percentiles in ms and errors (transport kinds and non-2xx/3xx statuses).
    """
    with tempfile.NamedTemporaryFile("w", suffix=".lua", prefix="bench-wrk-", delete=False) as file:
        file.write(script(requests))
    try:
        if warmup > 0:
            _wrk(url, Path(file.name), connections, warmup, None)
        return _wrk(url, Path(file.name), connections, duration, on_start)
    finally:
        os.unlink(file.name)


def _wrk(
    url: str, lua: Path, connections: int, duration: float, on_start: Callable[[int], None] | None
) -> dict[str, Any]:
    binary = available()
    if binary is None:
        raise RuntimeError("wrk is not installed (apt-get install wrk)")
    last_cpu = str((os.cpu_count() or 1) - 1)
    command = ["taskset", "-c", last_cpu, binary, "-t1", f"-c{connections}", f"-d{max(1, round(duration))}s"]
    command += [f"--timeout={_TIMEOUT_S}s", "-s", str(lua), url]
    # wrk has exited (and is gone from /proc) when its figures arrive: its CPU is read from the
    # children's rusage instead, which grows by what wrk used once it is reaped.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if on_start is not None:
        on_start(process.pid)
    stdout, stderr = process.communicate(timeout=duration + _TIMEOUT_S + 30)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    found = re.search(f"^{_MARK}(.*)$", stdout, re.MULTILINE)
    if process.returncode != 0 or found is None:
        raise RuntimeError(f"wrk exited with {process.returncode}: {stderr.strip()[-500:] or stdout[-500:]}")
    raw = orjson.loads(found.group(1))
    seconds = raw["duration_us"] / 1e6
    kinds = {kind: raw[kind] for kind in ("connect", "read", "write", "status", "timeout") if raw[kind]}
    return {
        "concurrency": connections,
        "seconds": round(seconds, 3),
        "requests": raw["requests"],
        "errors": sum(kinds.values()),
        "error_kinds": kinds,
        "rps": round(raw["requests"] / seconds, 1) if seconds else 0.0,
        **{f"{key}_ms": raw[f"{key}_us"] / 1000 for key in ("p50", "p90", "p99", "max", "mean")},
        "wrk_cpu_pct": round(100 * cpu_s / seconds, 1) if seconds else None,
    }
