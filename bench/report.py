"""Turn the runs' figures into the result document and its plain-text rendering.

The JSON document is the source of truth; the table is rendered from it so both always agree.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

LATENCY_COLUMNS = ("p50_ms", "p95_ms", "p99_ms", "max_ms")


def summarize_level(concurrency: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over runs (one slow run must not move the figure); errors are totalled instead."""
    median = {key: _median([run[key] for run in runs]) for key in ("rps", *LATENCY_COLUMNS)}
    median["errors"] = sum(run["errors"] for run in runs)
    names = runs[0]["processes"]
    cpu = {name: _median([run["processes"][name]["cpu_pct"] for run in runs]) for name in names}
    cpu["host"] = _median([run["host_cpu_pct"] for run in runs])
    cpu["other"] = round(cpu["host"] - sum(cpu[name] for name in names), 1)
    return {"concurrency": concurrency, "median": median, "cpu_pct_median": cpu, "runs": runs}


def peak_memory(levels: list[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Largest sampled ``VmRSS`` and ``VmHWM`` of each process over every measurement."""
    peaks: dict[str, dict[str, float | None]] = {}
    for level in levels:
        for run in level["runs"]:
            for name, figures in run["processes"].items():
                entry = peaks.setdefault(name, {"peak_rss_mib": None, "hwm_mib": None})
                for key in entry:
                    values = [v for v in (entry[key], figures[key]) if v is not None]
                    entry[key] = max(values) if values else None
    return peaks


def heading(report: dict[str, Any]) -> list[str]:
    """The scenario, its options and the machine's state: the first lines of every rendering."""
    options, env = report["options"], report["environment"]
    return [
        f"{report['scenario']}: {report['description']}",
        f"shards={options['shards']} runs={options['runs']} duration={options['duration']}s "
        f"warmup={options['warmup']}s | python {env['python']}, {env['cpus']} CPUs, "
        f"commit {env['commit']}, load avg {env['loadavg_before']:.2f} before start",
        "",
    ]


def render(report: dict[str, Any]) -> str:
    lines = [
        *heading(report),
        f"{'clients':>7}  {'run':<6} {'req/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} "
        f"{'max ms':>8} {'errors':>7}",
    ]
    for level in report["levels"]:
        rows = [("median", level["median"])] + [(str(k), run) for k, run in enumerate(level["runs"], 1)]
        for label, row in rows:
            latencies = " ".join(_cell(row[key], 8, 3) for key in LATENCY_COLUMNS)
            lines.append(
                f"{level['concurrency']:>7}  {label:<6} {row['rps']:>9.1f} {latencies} {row['errors']:>7}"
            )
    levels = report["levels"]
    lines += [
        "",
        "CPU % of one core in the measured window, median of runs "
        "(host = whole machine, other = host minus the processes above)",
        f"{'process':<10}" + "".join(f"{'c=' + str(level['concurrency']):>9}" for level in levels),
    ]
    for name in levels[0]["cpu_pct_median"]:
        lines.append(f"{name:<10}" + "".join(_cell(level["cpu_pct_median"][name], 9) for level in levels))
    lines += ["", f"{'process':<10} {'peak RSS MiB':>13} {'VmHWM MiB':>10}"]
    for name, memory in report["peak_memory"].items():
        lines.append(f"{name:<10} {_cell(memory['peak_rss_mib'], 13)} {_cell(memory['hwm_mib'], 10)}")
    return "\n".join(lines)


def _median(values: list[float | None]) -> float:
    present = [v for v in values if v is not None and not math.isnan(v)]
    return round(statistics.median(present), 3) if present else math.nan


def _cell(value: float | None, width: int, digits: int = 1) -> str:
    """A right-aligned number, or ``-`` where there is none (no responses, process gone)."""
    return f"{'-':>{width}}" if value is None or math.isnan(value) else f"{value:>{width}.{digits}f}"
