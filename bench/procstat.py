"""Per-process memory and CPU of the cluster under load, read from ``/proc``.

Peak RSS is the largest ``VmRSS`` seen by sampling every 0.2 s while the load runs (what the process
holds under load); ``VmHWM`` read at the end is the kernel's high-water mark since the process started,
so it also catches spikes between samples and during startup. The largest per-sample sum of ``VmRSS``
is what the processes held at once, which the sum of their peaks (reached at different times)
overstates. CPU is ``utime + stime`` over the measured window only, as a percentage of one core, so
that on a 2-core machine the reader sees which process saturates first and how much the load
generator itself costs.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SAMPLE_INTERVAL = 0.2
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PROC = Path("/proc")


@dataclass(frozen=True)
class ProcessFigures:
    peak_rss_mib: float | None
    hwm_mib: float | None
    cpu_pct: float | None


def _stat_fields(pid: int) -> list[str]:
    """Fields of ``/proc/<pid>/stat`` after the command name (which may contain spaces and parens)."""
    text = (_PROC / str(pid) / "stat").read_text()
    return text[text.rindex(")") + 2 :].split()


def _cpu_ticks(pid: int) -> int | None:
    try:
        fields = _stat_fields(pid)
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))


def cpu_seconds(pids: Iterable[int]) -> float:
    """User and system CPU time the processes have used so far (those gone count 0)."""
    return sum(_cpu_ticks(pid) or 0 for pid in pids) / os.sysconf("SC_CLK_TCK")


def _status_kib(pid: int, key: bytes) -> int | None:
    try:
        with open(_PROC / str(pid) / "status", "rb") as status:
            for line in status:
                if line.startswith(key):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def _host_busy_ticks() -> int:
    """Busy jiffies of all cores together, from the first line of ``/proc/stat``."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(v) for v in (_PROC / "stat").read_text().split("\n", 1)[0].split()[1:9]
    )
    return user + nice + system + irq + softirq + steal


def process_name(pid: int) -> str:
    """``gateway``, ``scheduler`` or ``shard-K`` from a ``python -m sift.cli <role>`` command line."""
    argv = (_PROC / str(pid) / "cmdline").read_bytes().decode().split("\0")
    role = argv[argv.index("sift.cli") + 1] if "sift.cli" in argv else Path(argv[0]).name
    if role == "shard" and "--id" in argv:
        return f"shard-{argv[argv.index('--id') + 1]}"
    return role


def cluster_processes(launcher_pid: int) -> dict[str, int]:
    """The launcher and its children by name, found by scanning ``/proc/*/stat`` for the parent pid."""
    found = {"launcher": launcher_pid}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if int(_stat_fields(int(entry.name))[1]) == launcher_pid:
                found[process_name(int(entry.name))] = int(entry.name)
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue  # exited while we looked
    return found


class ProcessSampler:
    """Samples ``VmRSS`` on a thread from ``start`` to ``stop``; CPU between the window marks.

    ``total_of`` names the processes whose summed ``VmRSS`` is tracked (``peak_total_mib``); default all.
    """

    def __init__(self, pids: dict[str, int], total_of: Iterable[str] | None = None) -> None:
        self.pids = pids
        self._total_of = frozenset(pids if total_of is None else total_of)
        self._peak_kib: dict[str, int] = {}
        self._peak_total_kib = 0
        self._ticks_at_start: dict[str, int | None] = {}
        self._ticks_at_end: dict[str, int | None] = {}
        self._hwm_kib: dict[str, int | None] = {}
        self._host_ticks = (0, 0)
        self._window = (0.0, 0.0)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._sample_until_stopped, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def begin_window(self) -> None:
        self._ticks_at_start = {name: _cpu_ticks(pid) for name, pid in self.pids.items()}
        self._host_ticks = (_host_busy_ticks(), 0)
        self._window = (time.monotonic(), 0.0)

    def end_window(self) -> None:
        """Also reads ``VmHWM`` now: the load generator exits right after its window."""
        self._ticks_at_end = {name: _cpu_ticks(pid) for name, pid in self.pids.items()}
        self._hwm_kib = {name: _status_kib(pid, b"VmHWM:") for name, pid in self.pids.items()}
        self._host_ticks = (self._host_ticks[0], _host_busy_ticks())
        self._window = (self._window[0], time.monotonic())

    def host_cpu_pct(self) -> float:
        """Busy CPU of the whole machine in the window (200 % = both cores), to spot outside noise."""
        return self._ticks_to_pct(self._host_ticks[1] - self._host_ticks[0])

    def stop(self) -> dict[str, ProcessFigures]:
        self._stopping.set()
        self._thread.join()
        figures = {}
        for name in self.pids:
            peak, hwm = self._peak_kib.get(name), self._hwm_kib.get(name)
            start, end = self._ticks_at_start.get(name), self._ticks_at_end.get(name)
            figures[name] = ProcessFigures(
                peak_rss_mib=None if peak is None else round(peak / 1024, 1),
                hwm_mib=None if hwm is None else round(hwm / 1024, 1),
                cpu_pct=None if start is None or end is None else round(self._ticks_to_pct(end - start), 1),
            )
        return figures

    def peak_total_mib(self) -> float:
        """Largest sum of the ``total_of`` processes' ``VmRSS`` in one sampling round."""
        return round(self._peak_total_kib / 1024, 1)

    def _ticks_to_pct(self, ticks: int) -> float:
        seconds = self._window[1] - self._window[0]
        return 100.0 * ticks / _CLOCK_TICKS / seconds if seconds > 0 else 0.0

    def _sample_until_stopped(self) -> None:
        while True:
            total = 0
            for name, pid in self.pids.items():
                rss = _status_kib(pid, b"VmRSS:")
                if rss is None:
                    continue
                self._peak_kib[name] = max(rss, self._peak_kib.get(name, 0))
                total += rss if name in self._total_of else 0
            self._peak_total_kib = max(total, self._peak_total_kib)
            if self._stopping.wait(SAMPLE_INTERVAL):
                return
