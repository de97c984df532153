"""The checks after each crash cycle: the cluster's tasks and documents against the writes we sent.

The ``Ledger`` remembers every request of the run; ``verify`` replays the succeeded tasks in uid order
into a model and compares it with the index, and records lost, stuck, phantom and misordered tasks in
the ``CrashReport``. Kept apart from the runner so the contract being checked reads in one place.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass, field

import httpx

from tests.support.crash.api import FINISHED, get_json, list_tasks, read_documents, wait_idle
from tests.support.crash.report import CrashReport
from tests.support.crash.workload import ID_SPACE, INDEX, Document, Write, apply_write


@dataclass
class Ledger:
    """Everything sent so far, by request id, and the acknowledged uids in acknowledgement order."""

    writes: dict[str, Write] = field(default_factory=dict)
    acked: list[tuple[int, Write]] = field(default_factory=list)
    unanswered: set[str] = field(default_factory=set)
    baseline: dict[str, Document] = field(default_factory=dict)
    baseline_uid: int = -1
    reported: set[int] = field(default_factory=set)
    """Task uids already named in the report (the model is rebuilt from every task each cycle)."""


def verify(
    client: httpx.Client,
    ledger: Ledger,
    cycle_acked: list[tuple[int, Write]],
    cycle: int,
    report: CrashReport,
    rng: random.Random,
    stuck_timeout: float,
) -> bool:
    """Check tasks and documents after a cycle; returns whether this cycle was clean."""
    problems_before = _problem_count(report)
    for task in wait_idle(client, stuck_timeout):
        report.stuck.append(
            f"cycle {cycle}: task {task['uid']} still {task['status']} after {stuck_timeout} s"
        )
    for uid, acked in cycle_acked:
        task = get_json(client, f"/tasks/{uid}")
        if task.get("code") == "task_not_found":
            report.lost.append(f"cycle {cycle}: task {uid} ({acked.kind} {acked.rid}) not found")
        elif task.get("customMetadata") != acked.rid:
            report.lost.append(
                f"cycle {cycle}: task {uid} was acknowledged for {acked.rid} ({acked.kind}) but holds "
                f"{task.get('customMetadata')!r} ({task.get('type')}, {task.get('status')})"
            )
        elif task["status"] not in FINISHED:
            report.stuck.append(f"cycle {cycle}: task {uid} is {task['status']}")
    tasks = list_tasks(client)
    listed = {t["uid"] for t in tasks}
    for uid, acked in cycle_acked:
        if uid not in listed:
            report.lost.append(f"cycle {cycle}: task {uid} ({acked.rid}) missing from GET /tasks")
    model = dict(ledger.baseline)
    history: dict[str, list[str]] = {}
    last_batch = -1
    for task in tasks:
        uid, status = task["uid"], task["status"]
        write = ledger.writes.get(task.get("customMetadata") or "")
        if write is None:
            if uid not in ledger.reported:
                ledger.reported.add(uid)
                report.phantoms.append(f"task {uid} ({task['type']}) metadata {task.get('customMetadata')!r}")
            continue
        if task["batchUid"] is not None:
            if task["batchUid"] < last_batch and uid not in ledger.reported:
                ledger.reported.add(uid)
                report.order_violations.append(
                    f"task {uid} ran in batch {task['batchUid']} after {last_batch}"
                )
            last_batch = max(last_batch, task["batchUid"])
        if uid <= ledger.baseline_uid:
            continue
        if (
            uid not in ledger.reported
            and status in ("succeeded", "failed")
            and ((status == "succeeded") == write.invalid)
        ):
            ledger.reported.add(uid)
            error = task.get("error") or {}
            line = (
                f"task {uid} ({write.kind} {write.rid}, batch {task['batchUid']}) {status}: "
                f"{error.get('code')}: {error.get('message', '')[:200]}"
            )
            (report.unexpected_successes if write.invalid else report.unexpected_failures).append(line)
        if status == "succeeded":
            apply_write(model, write)
            for key in _touched_ids(write, model):
                history.setdefault(key, []).append(f"{uid}:{write.kind}")
    actual, duplicates = read_documents(client)
    for duplicate in duplicates:
        report.mismatches.append(f"cycle {cycle}: document {duplicate} returned more than once")
    for key in sorted(set(model) | set(actual), key=lambda k: (len(k), k)):
        if model.get(key) != actual.get(key):
            trail = " ".join(history.get(key, [])[-6:])
            report.mismatches.append(
                f"cycle {cycle}: id {key}: expected {model.get(key)} got {actual.get(key)} [tasks {trail}]"
            )
    for doc_id in rng.sample(range(ID_SPACE), 12):
        response = client.get(f"/indexes/{INDEX}/documents/{doc_id}")
        got = response.json() if response.status_code == 200 else None
        if response.status_code not in (200, 404) or got != actual.get(str(doc_id)):
            report.mismatches.append(
                f"cycle {cycle}: GET document {doc_id} answered {response.status_code} {got} but the list "
                f"has {actual.get(str(doc_id))}"
            )
    if model != actual:
        report.mismatch_cycles.append(cycle)
    report.statuses = Counter(t["status"] for t in tasks if t.get("customMetadata") in ledger.writes)
    report.unanswered_registered = sum(1 for t in tasks if t.get("customMetadata") in ledger.unanswered)
    report.documents_at_end = len(actual)
    return _problem_count(report) == problems_before


def _problem_count(report: CrashReport) -> int:
    return sum(
        len(items)
        for items in (
            report.lost,
            report.stuck,
            report.phantoms,
            report.order_violations,
            report.mismatches,
            report.unexpected_successes,
        )
    )


def _touched_ids(write: Write, model: dict[str, Document]) -> list[str]:
    if write.kind == "clear":
        return list(model)
    return [str(d["id"]) for d in write.documents] + [str(i) for i in write.ids]


def check_ack_order(ledger: Ledger, report: CrashReport) -> None:
    """One writer sends in sequence, so a later acknowledgement must carry a larger uid."""
    uids = [uid for uid, _ in ledger.acked]
    for previous, current in itertools.pairwise(uids):
        if current <= previous:
            message = f"acknowledged uid {current} after uid {previous}"
            if message not in report.order_violations:
                report.order_violations.append(message)


def rebase(client: httpx.Client, ledger: Ledger) -> None:
    ledger.baseline, _ = read_documents(client)
    tasks = list_tasks(client)
    ledger.baseline_uid = tasks[-1]["uid"] if tasks else -1
