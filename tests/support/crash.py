"""Crash-recovery cycles: random writes while a random process of the cluster is SIGKILLed.

The checked contract: a write answered 202 is durable; after any ``kill -9`` the launcher brings the
process back; every acknowledged task finishes; and the index equals the succeeded tasks applied in
uid order (a failed or canceled task has no effect).

Every request carries a unique ``customMetadata``, so a task registered by a request whose answer was
lost (connection error, 5xx) is recognised in ``GET /tasks`` and modelled too; an acknowledged task
whose metadata does not match is counted as lost (its uid was reused).

Long mode for the bench: ``python -m tests.support.crash --cycles 200 --seed 7``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import random
import signal
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support.cluster import RunningCluster

INDEX = "crash"
ID_SPACE = 200
_DOC_TASK_TYPES = "documentAdditionOrUpdate,documentDeletion"
_FINISHED = ("succeeded", "failed", "canceled")
_WORDS = ("red", "green", "blue", "amber", "violet", "teal", "ochre", "ivory")
_INVALID_ID = "not a valid id!"

Document = dict[str, Any]


@dataclass(frozen=True)
class Write:
    """One HTTP write as sent; ``invalid`` ones carry a bad document id, so their task must fail."""

    rid: str
    kind: str  # replace | update | delete | delete_batch | clear
    documents: tuple[Document, ...] = ()
    ids: tuple[int, ...] = ()
    invalid: bool = False


@dataclass
class Kill:
    cycle: int
    role: str
    old_pid: int
    new_pid: int | None
    at_write: int
    recovery_s: float | None

    @property
    def came_back(self) -> bool:
        return self.new_pid is not None and self.recovery_s is not None


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


class _Writer(threading.Thread):
    """Sends one cycle's writes in order; an unanswered attempt is retried under a new request id."""

    def __init__(self, url: str, writes: list[Write], retry_for: float = 60.0) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.writes = writes
        self.retry_for = retry_for
        self.sent: list[Write] = []
        self.acked: list[tuple[int, Write]] = []
        self.unanswered: list[tuple[Write, str]] = []
        self.rejected: list[str] = []
        self.progress = 0
        self._progressed = threading.Condition()

    def wait_progress(self, count: int, timeout: float) -> None:
        with self._progressed:
            self._progressed.wait_for(lambda: self.progress >= count, timeout)

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30.0) as client:
            for position, write in enumerate(self.writes):
                self._send_until_answered(client, write)
                with self._progressed:
                    self.progress = position + 1
                    self._progressed.notify_all()

    def _send_until_answered(self, client: httpx.Client, write: Write) -> None:
        deadline = time.monotonic() + self.retry_for
        for attempt in itertools.count(1):
            self.sent.append(write)
            answer = _send(client, write)
            if isinstance(answer, int):
                self.acked.append((answer, write))
                return
            if answer.startswith("rejected"):
                self.rejected.append(f"{write.kind} {write.rid}: {answer}")
                return
            self.unanswered.append((write, answer))
            if time.monotonic() > deadline:
                return
            write = dataclasses.replace(write, rid=f"{write.rid.split('.')[0]}.{attempt}")
            time.sleep(min(0.05 * attempt, 0.5))


def _send(client: httpx.Client, write: Write) -> int | str:
    """The acknowledged task uid, or why there was no acknowledgement."""
    params = {"customMetadata": write.rid}
    base = f"/indexes/{INDEX}/documents"
    try:
        if write.kind == "replace":
            response = client.post(base, params=params, json=list(write.documents))
        elif write.kind == "update":
            response = client.put(base, params=params, json=list(write.documents))
        elif write.kind == "delete":
            response = client.delete(f"{base}/{write.ids[0]}", params=params)
        elif write.kind == "delete_batch":
            response = client.post(f"{base}/delete-batch", params=params, json=list(write.ids))
        else:
            response = client.delete(base, params=params)
    except httpx.HTTPError as error:
        return type(error).__name__
    if response.status_code == 202:
        return int(response.json()["taskUid"])
    if response.status_code >= 500:
        return f"http {response.status_code}"
    return f"rejected {response.status_code} {response.text[:200]}"


def plan_writes(rng: random.Random, cycle: int, count: int) -> list[Write]:
    """A random mix of writes over ids 0..ID_SPACE-1, so updates and deletes hit existing documents."""
    writes = []
    for n in range(count):
        rid = f"c{cycle}w{n}"
        roll = rng.random()
        if roll < 0.36:
            writes.append(Write(rid, "replace", _documents(rng, cycle, merge=False)))
        elif roll < 0.62:
            writes.append(Write(rid, "update", _documents(rng, cycle, merge=True)))
        elif roll < 0.77:
            writes.append(Write(rid, "delete", ids=(rng.randrange(ID_SPACE),)))
        elif roll < 0.92:
            ids = tuple(rng.randrange(ID_SPACE) for _ in range(rng.randint(1, 12)))
            writes.append(Write(rid, "delete_batch", ids=ids))
        elif roll < 0.94:
            writes.append(Write(rid, "clear"))
        else:
            kind = rng.choice(("replace", "update"))
            documents = list(_documents(rng, cycle, merge=kind == "update"))
            documents.insert(rng.randrange(len(documents) + 1), {"id": _INVALID_ID, "v": 0})
            writes.append(Write(rid, kind, tuple(documents), invalid=True))
    return writes


def _documents(rng: random.Random, cycle: int, merge: bool) -> tuple[Document, ...]:
    count = rng.randint(150, 400) if rng.random() < 0.08 else rng.randint(1, 8)
    documents = []
    for _ in range(count):
        doc: Document = {"id": rng.randrange(ID_SPACE)}
        if merge:
            for name in rng.sample(("v", "b", "o"), rng.randint(1, 2)):
                doc[name] = _value(rng, name)
        else:
            doc.update({"v": _value(rng, "v"), "a": rng.choice(_WORDS), "c": cycle})
            if rng.random() < 0.3:
                doc["o"] = _value(rng, "o")
        documents.append(doc)
    return tuple(documents)


def _value(rng: random.Random, name: str) -> Any:
    if name == "o":
        return {"x": rng.randrange(100), "tags": rng.sample(_WORDS, 2)}
    return rng.randrange(10_000)


def apply_write(model: dict[str, Document], write: Write) -> None:
    """The effect of a succeeded task: replace sets, update merges top-level fields or inserts."""
    if write.kind == "replace":
        for doc in write.documents:
            model[str(doc["id"])] = dict(doc)
    elif write.kind == "update":
        for doc in write.documents:
            key = str(doc["id"])
            model[key] = {**model.get(key, {}), **doc}
    elif write.kind in ("delete", "delete_batch"):
        for doc_id in write.ids:
            model.pop(str(doc_id), None)
    else:
        model.clear()


def kill_and_recover(
    cluster: RunningCluster, role: str, timeout: float = 45.0
) -> tuple[int, int | None, float | None]:
    """SIGKILL ``role``; returns (old pid, new pid, seconds from kill to a healthy cluster)."""
    old_pid = cluster.child_pids()[role]
    os.kill(old_pid, signal.SIGKILL)
    killed_at = time.monotonic()
    new_pid = None
    while time.monotonic() - killed_at < timeout:
        pid = cluster.child_pids().get(role)
        if pid is not None and pid != old_pid:
            new_pid = pid
            break
        time.sleep(0.02)
    if new_pid is None:
        return old_pid, None, None
    while time.monotonic() - killed_at < timeout:
        try:
            cluster.wait_healthy(timeout=max(0.1, timeout - (time.monotonic() - killed_at)))
        except TimeoutError:
            return old_pid, new_pid, None
        if role == "gateway" or cluster.backend_pid(role) == new_pid:
            return old_pid, new_pid, time.monotonic() - killed_at
        time.sleep(0.02)
    return old_pid, new_pid, None


@dataclass
class _Ledger:
    """Everything sent so far, by request id, and the acknowledged uids in acknowledgement order."""

    writes: dict[str, Write] = field(default_factory=dict)
    acked: list[tuple[int, Write]] = field(default_factory=list)
    unanswered: set[str] = field(default_factory=set)
    baseline: dict[str, Document] = field(default_factory=dict)
    baseline_uid: int = -1
    reported: set[int] = field(default_factory=set)
    """Task uids already named in the report (the model is rebuilt from every task each cycle)."""


def _get_json(client: httpx.Client, path: str, params: dict[str, Any] | None = None) -> Any:
    """GET with a few retries: verification runs on a healthy cluster, but be patient with it."""
    for attempt in range(20):
        try:
            response = client.get(path, params=params)
            if response.status_code < 500:
                return response.json()
        except httpx.HTTPError:
            pass
        time.sleep(0.1 * (attempt + 1))
    raise RuntimeError(f"GET {path} kept failing")


def list_tasks(client: httpx.Client) -> list[dict[str, Any]]:
    """Every document task of the index, in uid order (pages of ``GET /tasks``)."""
    tasks: list[dict[str, Any]] = []
    params: dict[str, Any] = {"indexUids": INDEX, "types": _DOC_TASK_TYPES, "limit": 5000}
    while True:
        page = _get_json(client, "/tasks", params)
        tasks.extend(page["results"])
        if page.get("next") is None:
            break
        params["from"] = page["next"]
    return sorted(tasks, key=lambda t: t["uid"])


def wait_idle(client: httpx.Client, timeout: float) -> list[dict[str, Any]]:
    """Poll until no document task of the index is enqueued or processing; returns those still open."""
    deadline = time.monotonic() + timeout
    params = {"indexUids": INDEX, "statuses": "enqueued,processing", "limit": 1000}
    while True:
        page = _get_json(client, "/tasks", params)
        if page["total"] == 0 or time.monotonic() > deadline:
            return list(page["results"])
        time.sleep(0.05)


def read_documents(client: httpx.Client, limit: int = 100_000) -> tuple[dict[str, Document], list[str]]:
    """The index's documents by id, and ids returned more than once."""
    page = _get_json(client, f"/indexes/{INDEX}/documents", {"limit": limit})
    seen: Counter[str] = Counter(str(doc["id"]) for doc in page["results"])
    duplicates = [doc_id for doc_id, n in seen.items() if n > 1]
    if page["total"] != len(page["results"]):
        duplicates.append(f"total {page['total']} != {len(page['results'])} returned")
    return {str(doc["id"]): doc for doc in page["results"]}, duplicates


def _verify(
    client: httpx.Client,
    ledger: _Ledger,
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
    for uid, write in cycle_acked:
        task = _get_json(client, f"/tasks/{uid}")
        if task.get("code") == "task_not_found":
            report.lost.append(f"cycle {cycle}: task {uid} ({write.kind} {write.rid}) not found")
        elif task.get("customMetadata") != write.rid:
            report.lost.append(
                f"cycle {cycle}: task {uid} was acknowledged for {write.rid} ({write.kind}) but holds "
                f"{task.get('customMetadata')!r} ({task.get('type')}, {task.get('status')})"
            )
        elif task["status"] not in _FINISHED:
            report.stuck.append(f"cycle {cycle}: task {uid} is {task['status']}")
    tasks = list_tasks(client)
    listed = {t["uid"] for t in tasks}
    for uid, write in cycle_acked:
        if uid not in listed:
            report.lost.append(f"cycle {cycle}: task {uid} ({write.rid}) missing from GET /tasks")
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
    for doc_id in duplicates:
        report.mismatches.append(f"cycle {cycle}: document {doc_id} returned more than once")
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


def run_crash_cycles(
    cycles: int,
    seed: int,
    shards: int = 2,
    writes_per_cycle: tuple[int, int] = (24, 40),
    stop_on_failure: bool = True,
    stuck_timeout: float = 60.0,
    roles: Sequence[str] | None = None,
) -> CrashReport:
    """Run ``cycles`` kill cycles on one cluster and check durability and document equality each cycle.

    ``stop_on_failure`` stops at the first cycle with a violation (later cycles would only repeat it);
    otherwise the model is re-based on the observed documents and the run goes on. ``roles`` limits
    the victims (default: every child); each round of kills takes every role once, in random order.
    """
    rng = random.Random(seed)
    report = CrashReport(seed=seed, shards=shards, cycles_planned=cycles)
    started = time.monotonic()
    ledger = _Ledger()
    with RunningCluster(shards=shards) as cluster, httpx.Client(base_url=cluster.url, timeout=30.0) as client:
        created = client.post("/indexes", json={"uid": INDEX, "primaryKey": "id"}).json()
        _wait_task(client, created["taskUid"])
        victims: list[str] = []
        for cycle in range(cycles):
            if not victims:
                victims = sorted(roles or cluster.child_pids())
                rng.shuffle(victims)
            role = victims.pop()
            writes = plan_writes(rng, cycle, rng.randint(*writes_per_cycle))
            for write in writes:
                ledger.writes[write.rid] = write
            writer = _Writer(cluster.url, writes)
            kill_at = rng.randint(1, len(writes) - 2)
            writer.start()
            writer.wait_progress(kill_at, timeout=60)
            time.sleep(rng.uniform(0, 0.08))
            old_pid, new_pid, recovery = kill_and_recover(cluster, role)
            report.kills.append(Kill(cycle, role, old_pid, new_pid, kill_at, recovery))
            writer.join(timeout=120)
            for write in writer.sent:
                ledger.writes.setdefault(write.rid, write)
            for write, reason in writer.unanswered:
                ledger.unanswered.add(write.rid)
                report.unanswered_reasons[reason] += 1
            ledger.acked.extend(writer.acked)
            report.writes_sent += len(writer.sent)
            report.acknowledged += len(writer.acked)
            report.unanswered += len(writer.unanswered)
            report.rejected.extend(f"cycle {cycle}: {r}" for r in writer.rejected)
            if writer.is_alive():
                report.stuck.append(f"cycle {cycle}: the writer did not finish within 120 s")
            if recovery is None:
                report.log_excerpt = cluster.output[-80:]
                break
            _check_ack_order(ledger, report)
            clean = _verify(client, ledger, writer.acked, cycle, report, rng, stuck_timeout)
            report.cycles = cycle + 1
            if not clean:
                report.log_excerpt = [
                    line for line in cluster.output if "error" in line.lower() or "died" in line
                ][-40:] or cluster.output[-40:]
                if stop_on_failure:
                    break
                _rebase(client, ledger)
        report.resumed_batches = sum("resuming in-flight batch" in line for line in cluster.output)
    report.elapsed_s = time.monotonic() - started
    return report


def _check_ack_order(ledger: _Ledger, report: CrashReport) -> None:
    """One writer sends in sequence, so a later acknowledgement must carry a larger uid."""
    uids = [uid for uid, _ in ledger.acked]
    for previous, current in itertools.pairwise(uids):
        if current <= previous:
            message = f"acknowledged uid {current} after uid {previous}"
            if message not in report.order_violations:
                report.order_violations.append(message)


def _rebase(client: httpx.Client, ledger: _Ledger) -> None:
    ledger.baseline, _ = read_documents(client)
    tasks = list_tasks(client)
    ledger.baseline_uid = tasks[-1]["uid"] if tasks else -1


def _wait_task(client: httpx.Client, uid: int, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        task = _get_json(client, f"/tasks/{uid}")
        if task.get("status") in _FINISHED:
            return dict(task)
        time.sleep(0.02)
    raise TimeoutError(f"task {uid} not finished after {timeout} s")


@dataclass
class BulkReport:
    rounds: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    documents: int = 0
    log_excerpt: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [
            f"bulk rounds: {len(self.rounds)}, documents: {self.documents}, problems: {len(self.problems)}"
        ]
        lines += [f"  {r}" for r in self.rounds]
        lines += [f"  PROBLEM {p}" for p in self.problems[:40]]
        if self.problems:
            lines += [f"  | {line}" for line in self.log_excerpt]
        return "\n".join(lines)


def run_bulk_scheduler_kills(
    rounds: int = 5, documents: int = 20_000, delays: tuple[float, ...] = (0.0, 0.02, 0.05, 0.1, 0.2)
) -> BulkReport:
    """Kill the scheduler right after each large addition is acknowledged; every document arrives once.

    The delays spread the kill over the batch's life (queued, planning, on the shards, committed);
    each round notes whether the restarted scheduler resumed an in-flight batch.
    """
    report = BulkReport()
    index = "bulk"
    with RunningCluster(shards=2) as cluster, httpx.Client(base_url=cluster.url, timeout=120.0) as client:
        for round_no in range(rounds):
            base = round_no * documents
            docs = [{"id": base + i, "title": f"doc {base + i}", "round": round_no} for i in range(documents)]
            response = client.post(f"/indexes/{index}/documents", json=docs)
            if response.status_code != 202:
                report.problems.append(
                    f"round {round_no}: answered {response.status_code} {response.text[:200]}"
                )
                break
            uid = response.json()["taskUid"]
            time.sleep(delays[round_no % len(delays)])
            seen_lines = len(cluster.output)
            _, _, recovery = kill_and_recover(cluster, "scheduler")
            if recovery is None:
                report.problems.append(f"round {round_no}: the scheduler did not come back")
                break
            task = _wait_task(client, uid, timeout=120)
            details = task.get("details", {})
            report.rounds.append(
                {
                    "round": round_no,
                    "task": uid,
                    "status": task["status"],
                    "indexed": details.get("indexedDocuments"),
                    "recovery_s": round(recovery, 2),
                    "resumed": any(
                        "resuming in-flight batch" in line for line in cluster.output[seen_lines:]
                    ),
                }
            )
            if task["status"] != "succeeded" or details.get("indexedDocuments") != documents:
                report.problems.append(
                    f"round {round_no}: task {uid} {task['status']} {details} {task['error']}"
                )
            stats = _get_json(client, f"/indexes/{index}/stats")
            if stats.get("numberOfDocuments") != base + documents:
                report.problems.append(
                    f"round {round_no}: numberOfDocuments {stats.get('numberOfDocuments')}, "
                    f"expected {base + documents}"
                )
        page = _get_json(client, f"/indexes/{index}/documents", {"limit": rounds * documents + 10})
        results = page["results"]
        report.documents = len(results)
        ids = Counter(doc["id"] for doc in results)
        expected = set(range(len(report.rounds) * documents))
        duplicated = [doc_id for doc_id, n in ids.items() if n > 1]
        missing = expected - set(ids)
        extra = set(ids) - expected
        if duplicated or missing or extra or page["total"] != len(expected):
            report.problems.append(
                f"documents: total {page['total']}, {len(duplicated)} duplicated, {len(missing)} missing, "
                f"{len(extra)} unexpected (e.g. {sorted(missing)[:5]} {duplicated[:5]})"
            )
        wrong = [
            doc
            for doc in results
            if doc != {"id": doc["id"], "title": f"doc {doc['id']}", "round": doc["id"] // documents}
        ]
        if wrong:
            report.problems.append(f"{len(wrong)} documents differ, e.g. {wrong[:3]}")
        if report.problems:
            report.log_excerpt = cluster.output[-60:]
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--keep-going", action="store_true", help="re-base the model after a violation")
    parser.add_argument("--roles", help="comma-separated victims, e.g. gateway,scheduler (default: all)")
    args = parser.parse_args(argv)
    report = run_crash_cycles(
        args.cycles,
        args.seed,
        args.shards,
        stop_on_failure=not args.keep_going,
        roles=args.roles.split(",") if args.roles else None,
    )
    print(report.summary())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
