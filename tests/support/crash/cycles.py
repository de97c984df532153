"""The kill/restart cycles: a writer thread sends a cycle's writes while one process is SIGKILLed.

``run_crash_cycles`` drives one cluster through the cycles (plan, write, kill, wait for recovery,
verify) and returns the ``CrashReport``; ``_Writer`` is the client that keeps sending through the
kill. This is the orchestration only: the workload, the HTTP calls and the checks live beside it.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import threading
import time
from collections.abc import Sequence

import httpx

from tests.support.cluster import RunningCluster
from tests.support.crash.api import send, wait_task
from tests.support.crash.kills import Kill, kill_and_recover
from tests.support.crash.report import CrashReport
from tests.support.crash.verification import Ledger, check_ack_order, rebase, verify
from tests.support.crash.workload import INDEX, Write, plan_writes


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
            answer = send(client, write)
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
    ledger = Ledger()
    with RunningCluster(shards=shards) as cluster, httpx.Client(base_url=cluster.url, timeout=30.0) as client:
        created = client.post("/indexes", json={"uid": INDEX, "primaryKey": "id"}).json()
        wait_task(client, created["taskUid"])
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
            check_ack_order(ledger, report)
            clean = verify(client, ledger, writer.acked, cycle, report, rng, stuck_timeout)
            report.cycles = cycle + 1
            if not clean:
                report.log_excerpt = [
                    line for line in cluster.output if "error" in line.lower() or "died" in line
                ][-40:] or cluster.output[-40:]
                if stop_on_failure:
                    break
                rebase(client, ledger)
        report.resumed_batches = sum("resuming in-flight batch" in line for line in cluster.output)
    report.elapsed_s = time.monotonic() - started
    return report
