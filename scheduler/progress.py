"""Where the running batch is, and how long each of its steps took (core.md §3.5).

The executor enters named steps as it goes; each level of the stack is one step among a known list of
siblings (``finished`` = its position, ``total`` = their number), and a level may end with a counter
(``shard``: how many shards answered). ``progress`` is what ``GET /batches`` shows of the batch in
progress; ``trace`` is its ``stats.progressTrace``: every finished step's duration under its path
(``processing tasks > applying on shards``), children before their parent, then the steps still
running with their time so far, innermost first. Time is ``time.monotonic_ns``: immune to clock steps.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from common.timing import human_duration

TOP_STEPS = ("processing tasks", "writing tasks to disk")
"""Every batch: what its tasks do (planning, the shards applying them), then its one commit."""

_SEPARATOR = " > "


@dataclass
class _Level:
    name: str
    finished: int
    total: int
    started_ns: int
    counter: bool = False
    """A counter of units (not a step): never a path of the trace itself."""


class Progress:
    def __init__(self) -> None:
        self._levels: list[_Level] = []
        self._trace: dict[str, int] = {}

    @contextmanager
    def step(self, siblings: Sequence[str], position: int) -> Iterator[None]:
        """Run ``siblings[position]`` as the next level; its duration is traced when it ends."""
        level = _Level(siblings[position], position, len(siblings), time.monotonic_ns())
        self._levels.append(level)
        try:
            yield
        finally:
            self._record(self._path(level), level.started_ns)
            self._levels.remove(level)

    @contextmanager
    def count(self, unit: str, total: int) -> Iterator[Counter]:
        """A last level counting ``total`` units of work (e.g. shards) as they complete."""
        level = _Level(unit, 0, total, time.monotonic_ns(), counter=True)
        self._levels.append(level)
        try:
            yield Counter(self, level)
        finally:
            self._levels.remove(level)

    def _path(self, level: _Level) -> str:
        """The names of the levels down to ``level``, counters left out."""
        names = [entry.name for entry in self._levels[: self._levels.index(level) + 1] if not entry.counter]
        return _SEPARATOR.join(names)

    def _record(self, path: str, started_ns: int) -> None:
        self._add(path, time.monotonic_ns() - started_ns)

    def _add(self, path: str, nanoseconds: int) -> None:
        """A step run several times in a batch (a second round on the shards, the commit after the
        prepare) sums its runs, and moves after the steps traced meanwhile: they may be its children."""
        self._trace[path] = self._trace.pop(path, 0) + nanoseconds

    def view(self) -> dict[str, object]:
        """``{"steps": [{currentStep, finished, total}], "percentage"}``: each level's share of its
        parent's current step, so 1 of 4 under step 0 of 2 is 12.5 %."""
        percentage, weight = 0.0, 100.0
        for level in self._levels:
            weight /= max(level.total, 1)
            percentage += level.finished * weight
        steps = [
            {"currentStep": level.name, "finished": level.finished, "total": level.total}
            for level in self._levels
        ]
        return {"steps": steps, "percentage": percentage}

    def durations_ns(self) -> dict[str, int]:
        """The finished steps' durations in nanoseconds, by path (``trace``'s order)."""
        return dict(self._trace)

    def trace(self) -> dict[str, str]:
        """Durations as ``performanceDetails`` writes them (``66.31µs``, ``7.06ms``, ``1.09s``)."""
        now = time.monotonic_ns()
        durations = dict(self._trace)
        for level in reversed(self._levels):
            if not level.counter:
                durations.setdefault(self._path(level), now - level.started_ns)
        return {path: human_duration(ns) for path, ns in durations.items()}


@dataclass(frozen=True)
class FinishedBatch:
    """A committed batch, as the executor tells ``on_finished`` of it."""

    uid: int
    tasks: list[dict[str, Any]]
    outcomes: Mapping[int, Any]
    """Task uid -> ``scheduler.tasks.Outcome``."""
    duration_ns: int
    steps_ns: dict[str, int]


class Counter:
    def __init__(self, progress: Progress, level: _Level) -> None:
        self._progress = progress
        self._level = level

    def done(self, label: str, steps: Mapping[str, int] | None = None) -> None:
        """One unit finished: counted, and its time since the counter started traced as
        ``<path of the step> > <label>``, after the durations of its own ``steps`` (ns) if it
        reported them."""
        self._level.finished += 1
        path = f"{self._progress._path(self._level)}{_SEPARATOR}{label}"
        for name, nanoseconds in (steps or {}).items():
            self._progress._add(f"{path}{_SEPARATOR}{name}", nanoseconds)
        self._progress._record(path, self._level.started_ns)
