"""Crash recovery: ``kill -9`` of any process loses no acknowledged task and leaves the index exact.

Each test starts its own cluster (``tests.support.crash``), since processes are killed on purpose.
"""

from __future__ import annotations

from tests.support.crash import run_bulk_scheduler_kills, run_crash_cycles

SEED = 20240611


def test_random_kills_lose_no_acknowledged_task_and_keep_documents_exact() -> None:
    report = run_crash_cycles(cycles=20, seed=SEED)
    summary = report.summary()
    assert report.cycles == 20, summary
    assert report.acknowledged > 0 and report.lost == [], summary
    assert report.stuck == [], summary
    assert report.phantoms == [] and report.order_violations == [], summary
    assert report.mismatches == [], summary
    assert report.unexpected_successes == [] and report.rejected == [], summary
    assert {k.role for k in report.kills} == {"gateway", "scheduler", "shard-0", "shard-1"}, summary
    assert report.not_back == [], summary
    assert report.ok, summary


def test_scheduler_killed_after_a_large_addition_delivers_each_document_once() -> None:
    report = run_bulk_scheduler_kills(rounds=5, documents=20_000)
    summary = report.summary()
    assert len(report.rounds) == 5, summary
    assert report.problems == [], summary
    assert report.documents == 100_000, summary
