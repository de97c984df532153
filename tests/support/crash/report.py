"""The outcome of a run of crash cycles: counts, every violation found, and a readable summary.

``CrashReport`` is what the tests assert on and what the command line prints; it only collects and
formats, so it has a module of its own apart from the checks that fill it in.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from tests.support.crash.kills import Kill


@dataclass
class CrashReport:
    seed: int
    shards: int
    cycles_planned: int
    cycles: int = 0
    writes_sent: int = 0
    acknowledged: int = 0
    unanswered: int = 0
    """Attempts with a connection error, timeout or 5xx: not acknowledged, retried as a new request."""
    unanswered_registered: int = 0
    """Of those, how many had registered a task anyway (modelled by their real outcome)."""
    unanswered_reasons: Counter[str] = field(default_factory=Counter)
    rejected: list[str] = field(default_factory=list)
    """Unexpected 4xx answers to well-formed writes."""
    lost: list[str] = field(default_factory=list)
    stuck: list[str] = field(default_factory=list)
    phantoms: list[str] = field(default_factory=list)
    """Tasks in ``GET /tasks`` that no request of ours created."""
    order_violations: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    """Document differences between the index and the model, one line per document."""
    mismatch_cycles: list[int] = field(default_factory=list)
    unexpected_failures: list[str] = field(default_factory=list)
    """Valid writes whose task failed (allowed by the contract if it had no effect; worth a look)."""
    unexpected_successes: list[str] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)
    kills: list[Kill] = field(default_factory=list)
    documents_at_end: int = 0
    resumed_batches: int = 0
    """Batches the restarted scheduler found in flight and re-ran (evidence kills land mid-batch)."""
    elapsed_s: float = 0.0
    log_excerpt: list[str] = field(default_factory=list)

    @property
    def recovery_times(self) -> list[float]:
        return [k.recovery_s for k in self.kills if k.recovery_s is not None]

    @property
    def not_back(self) -> list[Kill]:
        return [k for k in self.kills if not k.came_back]

    @property
    def ok(self) -> bool:
        return not (
            self.lost
            or self.stuck
            or self.phantoms
            or self.order_violations
            or self.mismatches
            or self.not_back
            or self.rejected
            or self.unexpected_successes
            or self.cycles < self.cycles_planned
        )

    def summary(self) -> str:
        times = self.recovery_times
        killed = Counter(k.role for k in self.kills)
        lines = [
            f"crash cycles: {self.cycles}/{self.cycles_planned} (seed {self.seed}, {self.shards} shards) "
            f"in {self.elapsed_s:.1f} s -> {'OK' if self.ok else 'FAILED'}",
            f"writes sent: {self.writes_sent}, acknowledged tasks: {self.acknowledged}, "
            f"unanswered attempts: {self.unanswered} ({self.unanswered_registered} registered anyway) "
            f"{dict(self.unanswered_reasons)}",
            f"task statuses: {dict(self.statuses)}; documents at end: {self.documents_at_end}",
            f"lost tasks: {len(self.lost)}, stuck: {len(self.stuck)}, phantoms: {len(self.phantoms)}, "
            f"order violations: {len(self.order_violations)}, mismatching docs: {len(self.mismatches)} "
            f"(cycles {self.mismatch_cycles})",
            f"unexpected failures: {len(self.unexpected_failures)}, "
            f"unexpected successes: {len(self.unexpected_successes)}, rejected: {len(self.rejected)}",
            f"kills: {len(self.kills)} {dict(sorted(killed.items()))}; not back: {len(self.not_back)}; "
            f"in-flight batches resumed: {self.resumed_batches}",
        ]
        if times:
            lines.append(
                f"recovery kill->healthy: median {statistics.median(times):.2f} s, max {max(times):.2f} s"
            )
        for title, items in (
            ("lost", self.lost),
            ("stuck", self.stuck),
            ("phantoms", self.phantoms),
            ("order violations", self.order_violations),
            ("mismatches", self.mismatches),
            ("unexpected failures", self.unexpected_failures),
            ("unexpected successes", self.unexpected_successes),
            ("rejected", self.rejected),
            ("not back", [str(k) for k in self.not_back]),
        ):
            if items:
                lines.append(f"{title}:")
                lines.extend(f"  {item}" for item in items[:25])
                if len(items) > 25:
                    lines.append(f"  ... {len(items) - 25} more")
        if self.log_excerpt and not self.ok:
            lines.append("cluster output (excerpt):")
            lines.extend(f"  {line}" for line in self.log_excerpt)
        return "\n".join(lines)
