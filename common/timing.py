"""Step timings of a search, for ``showPerformanceDetails`` (search.md §1.4 ``performanceDetails``).

A ``Steps`` exists only when a query asked for the details: callers hold ``Steps | None`` and time
nothing otherwise, so the flag costs a ``None`` check when it is off. Shards send their steps as
nanoseconds; the gateway files them under the shard's name and formats every duration at the end.
"""

from __future__ import annotations

import time


class Steps:
    """Wall-clock durations of named steps in nanoseconds, in the order the steps ended.

    Names are hierarchical (``search > shard 0 > rank``): a ``child`` times its own sequence of
    steps under its parent's name, into the same map, so concurrent parts (the queries of a
    federated search) each keep their own clock.
    """

    __slots__ = ("_mark", "durations", "prefix")

    def __init__(self, durations: dict[str, int] | None = None, prefix: str = "") -> None:
        self.durations: dict[str, int] = {} if durations is None else durations
        self.prefix = prefix
        self._mark = time.perf_counter_ns()

    def child(self, name: str) -> Steps:
        """Steps of the part ``name``, timed from now."""
        return Steps(self.durations, f"{self.prefix}{name} > ")

    def lap(self, name: str) -> None:
        """End the step running since the previous lap (or since creation) as ``name``."""
        now = time.perf_counter_ns()
        self.add(name, now - self._mark)
        self._mark = now

    def add(self, name: str, nanoseconds: int) -> None:
        """A step run several times (e.g. one fan-out round per distinct retry) sums its runs."""
        key = self.prefix + name
        self.durations[key] = self.durations.get(key, 0) + nanoseconds

    def include(self, name: str, durations: dict[str, int]) -> None:
        """Another process's steps (a shard's) under ``name``."""
        for step, nanoseconds in durations.items():
            self.add(f"{name} > {step}", nanoseconds)

    def details(self) -> dict[str, str]:
        """The ``performanceDetails`` object: step name -> human duration."""
        return {name: human_duration(nanoseconds) for name, nanoseconds in self.durations.items()}


def timed(flag: bool | None) -> Steps | None:
    """Steps timed from now when ``showPerformanceDetails`` is true; None otherwise."""
    return Steps() if flag else None


def lap(steps: Steps | None, name: str) -> None:
    """``steps.lap(name)`` when the query asked for details; nothing otherwise."""
    if steps is not None:
        steps.lap(name)


def human_duration(nanoseconds: int) -> str:
    """``950ns``, ``12.35µs``, ``3.21ms``, ``1.50s``: the unit that keeps the figure readable, two
    decimals beyond nanoseconds (``999.996µs`` reads ``1.00ms``, not ``1000.00µs``)."""
    if nanoseconds < 1_000:
        return f"{nanoseconds}ns"
    for unit, scale in (("µs", 1e3), ("ms", 1e6)):
        text = f"{nanoseconds / scale:.2f}"
        if float(text) < 1_000:
            return text + unit
    return f"{nanoseconds / 1e9:.2f}s"
