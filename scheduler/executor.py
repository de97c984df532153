"""Runs batches one at a time: dispatch to shards, then commit every task's outcome at once.

Order of durability: the batch is recorded as in flight, shards apply and record it (document and
settings batches of an index with embedders in two phases, the decision recorded in the in-flight
record between them: ``scheduler/prepare.py``), then one scheduler transaction commits the task
outcomes, the catalog, the batch and its webhook notifications (``scheduler/outbox.py``). After a
crash the in-flight batch is re-run with the same uid before anything else; shards answer it from
their record.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pyroaring import BitMap

from common.config.sizes import human_size
from common.documents.geo import uses_geo
from common.documents.geojson import uses_geojson
from common.errors import ApiError, index_already_exists, index_not_found
from common.logging import get_logger
from common.task_vocabulary import FAILED, FINISHED, SUCCEEDED
from common.timefmt import now_ns
from scheduler.batch_records import batch_error, write_batch
from scheduler.batching import BatchPlan, Limits, plan_next_batch
from scheduler.cancelation import cancel_enqueued
from scheduler.delivery import Deliverer
from scheduler.documents import plan_documents
from scheduler.dumps import create_dump
from scheduler.prepare import (
    BatchAborted,
    Decision,
    apply_in_one_phase,
    apply_in_two_phases,
    needs_two_phases,
)
from scheduler.progress import TOP_STEPS, FinishedBatch, Progress
from scheduler.queries import Processing
from scheduler.rules import RULE_TASK_TYPES, run_rules_batch
from scheduler.settings import run_settings_batch
from scheduler.shards import ShardClients
from scheduler.snapshots import Snapshots
from scheduler.store import SchedulerStore, new_index_record
from scheduler.swaps import plan_swap
from scheduler.tasks import Outcome, matched_tasks
from scheduler.upgrade import DatabaseUpgrade

log = get_logger(__name__)

_DOCUMENT_STEPS = ("reading payloads", "preparing documents", "applying on shards")
"""A document batch: its stored payloads, their partitioning and checks, every shard applying its part."""


async def _nothing() -> None:
    return None


class Executor:
    def __init__(
        self,
        store: SchedulerStore,
        shards: ShardClients,
        limits: Limits,
        notifications: Deliverer,
        snapshots: Snapshots,
        upgrade: DatabaseUpgrade | None = None,
    ) -> None:
        self.store = store
        self.snapshots = snapshots
        self.upgrade = upgrade
        self.shards = shards
        self.limits = limits
        self.notifications = notifications
        self.processing: Processing | None = None
        self.wake = asyncio.Event()
        self._abort_requested = False
        self._decision: Decision | None = None
        """The running batch's two-phase decision (``scheduler/prepare.py``), once taken."""
        self._resumed = False
        """Whether the running batch was in flight when the scheduler started: shards may have
        committed it under a decision that was not recorded, so it cannot be canceled."""
        self.before_batch: Callable[[], Awaitable[None]] = _nothing
        self.on_finished: Callable[[FinishedBatch], None] | None = None
        """Told of every batch once committed (``scheduler/metrics.py``)."""
        self.dump_dir = Path("dumps")
        """``--dump-dir``, where ``dumpCreation`` writes."""

    async def run_forever(self) -> None:
        in_flight = self.store.get_meta("current_batch")
        if in_flight is not None:
            log.info("resuming in-flight batch", batch_uid=in_flight["uid"])
            resumed = BatchPlan(self.store.get_tasks(in_flight["tasks"]), in_flight["strategy"])
            decided = in_flight.get("decision")
            decision = None if decided is None else Decision.from_record(decided)
            await self._run(resumed, in_flight["uid"], in_flight["startedNs"], decision, resumed=True)
        while True:
            await self.before_batch()
            plan = plan_next_batch(self.store, self.limits)
            if plan is None:
                self.wake.clear()
                await self.wake.wait()
                continue
            batch_uid = self.store.get_meta("next_batch_uid", 0)
            log.debug("batch planned", batch_uid=batch_uid, tasks=len(plan.tasks), strategy=plan.strategy)
            started = now_ns()
            with self.store.write() as txn:
                txn.set_meta("next_batch_uid", batch_uid + 1)
                txn.set_meta(
                    "current_batch",
                    {
                        "uid": batch_uid,
                        "tasks": [t["uid"] for t in plan.tasks],
                        "startedNs": started,
                        "strategy": plan.strategy,
                    },
                )
            await self._run(plan, batch_uid, started)

    async def request_abort(self, task_uids: BitMap) -> None:
        """A cancelation matched tasks of the running batch: roll it back unless its commit was decided."""
        decided = self._decision is not None or self._resumed
        if self.processing is not None and task_uids & self.processing.task_uids and not decided:
            self._abort_requested = True
            await self.shards.abort(self.processing.batch_uid)

    async def _run(
        self,
        plan: BatchPlan,
        batch_uid: int,
        started: int,
        decision: Decision | None = None,
        resumed: bool = False,
    ) -> None:
        self.processing = Processing(batch_uid, started, BitMap(t["uid"] for t in plan.tasks), plan.strategy)
        self._abort_requested = False
        self._decision, self._resumed = decision, resumed
        try:
            with self.processing.progress.step(TOP_STEPS, 0):
                outcomes, catalog = await self._execute(plan, batch_uid)
        except BatchAborted:
            log.info("batch rolled back by a cancelation", batch_uid=batch_uid)
            with self.store.write() as txn:
                txn.set_meta("current_batch", None)
            self.processing = None
            self._decision = None
            return
        except Exception as error:
            log.error("batch failed", batch_uid=batch_uid, exc_info=error)
            failure = batch_error(error).to_dict()
            outcomes, catalog = {t["uid"]: Outcome(FAILED, error=failure) for t in plan.tasks}, []
        progress = self.processing.progress
        self._commit(plan, batch_uid, started, outcomes, catalog, progress)
        self.processing = None
        self._decision = None
        finished = FinishedBatch(batch_uid, plan.tasks, outcomes, now_ns() - started, progress.durations_ns())
        failed = sum(outcome.status == FAILED for outcome in outcomes.values())
        log.info(
            "batch processed", batch_uid=batch_uid, tasks=len(outcomes), failed=failed,
            ms=round(finished.duration_ns / 1e6, 1),
        )  # fmt: skip
        if self.on_finished is not None:
            self.on_finished(finished)

    @property
    def _started_ns(self) -> int:
        assert self.processing is not None, "only a running batch has started"
        return self.processing.started_ns

    @property
    def _progress(self) -> Progress:
        assert self.processing is not None, "only a running batch has progress"
        return self.processing.progress

    def _commit(
        self,
        plan: BatchPlan,
        batch_uid: int,
        started: int,
        outcomes: dict[int, Outcome],
        catalog: list[tuple[str, Any]],
        progress: Progress,
    ) -> None:
        finished = now_ns()
        # The batch's trace closes with this step, still running as the batch record is written.
        with self.store.write() as txn, progress.step(TOP_STEPS, 1):
            notified = write_batch(
                txn, plan, batch_uid, started, finished, outcomes, catalog, progress.trace()
            )
            deliveries = self.notifications.stage(txn, batch_uid, notified, finished)
        self.notifications.schedule(deliveries)

    async def _execute(
        self, plan: BatchPlan, batch_uid: int
    ) -> tuple[dict[int, Outcome], list[tuple[str, Any]]]:
        first = plan.tasks[0]
        kind = first["type"]
        if kind == "taskCancelation":
            return cancel_enqueued(self.store, first), []
        if kind == "taskDeletion":
            return self._delete_tasks(plan.tasks), []
        if kind == "indexSwap":
            return await self._swap(first, batch_uid)
        if kind == "indexCreation":
            return await self._create_index(first, batch_uid)
        if kind == "indexCompaction":
            return await self._compact(first, batch_uid)
        if kind == "dumpCreation":
            started = self._started_ns
            uid = await create_dump(self.store, self.shards, self.dump_dir, first, started)
            return {first["uid"]: Outcome(SUCCEEDED, results={"dumpUid": uid})}, []
        if kind == "upgradeDatabase" and self.upgrade is not None:
            dispatch_all = functools.partial(self._dispatch, batch_uid)
            return await self.upgrade.run(plan.tasks, dispatch_all), []
        if kind == "snapshotCreation":
            return await self.snapshots.create(plan, batch_uid, self._started_ns, self._progress), []
        if kind == "indexUpdate":
            return await self._update_index(first, batch_uid)
        if kind in RULE_TASK_TYPES:
            return run_rules_batch(self.store, plan.tasks)
        if kind == "settingsUpdate" and all(t["type"] != "indexDeletion" for t in plan.tasks):
            embedders = _has_embedders(self.store.get_index(first["indexUid"]))
            dispatch = functools.partial(self._dispatch, batch_uid, cancelable=True, embedders=embedders)
            return await run_settings_batch(
                self.store, plan.tasks, self.shards.count, dispatch, self.shards.first_invalid
            )
        return await self._index_batch(plan.tasks, batch_uid)

    async def _dispatch(
        self,
        batch_uid: int,
        operations: list[list[dict[str, Any]]],
        *,
        cancelable: bool = False,
        embedders: bool = False,
    ) -> dict:
        """Apply on every shard; ``cancelable`` (document and settings batches): a cancelation can
        roll the batch back, and when a task can fail on one shard only (``embedders``: whether the
        index has some), in two phases so that it fails on every shard (``scheduler/prepare.py``).

        Each shard's answer is counted in the batch's progress; its time (``shard k``) and the
        steps it timed itself go to the batch's trace.
        """
        two_phases = self._decision is not None or needs_two_phases(operations, embedders)
        if cancelable and two_phases:
            results = await apply_in_two_phases(
                self.shards,
                batch_uid,
                operations,
                self._progress,
                self._decision,
                functools.partial(self._record_decision, batch_uid),
                lambda: self._abort_requested,
            )
        else:
            abortable = cancelable and not self._resumed
            results = await apply_in_one_phase(self.shards, batch_uid, operations, self._progress, abortable)
        counts: dict[str, dict[str, Any]] = {}
        for result in results:
            for task_uid, task_counts in result.get("tasks", {}).items():
                merged = counts.setdefault(task_uid, {})
                for name, value in task_counts.items():
                    # A task a shard refused (e.g. a filter on a field not filterable) carries its error:
                    # shards decide alike, since they share the settings.
                    merged[name] = value if name == "error" else merged.get(name, 0) + value
        return counts

    def _record_decision(self, batch_uid: int, decision: Decision) -> None:
        """Durable before any shard commits, when it skips tasks: a restarted scheduler commits with
        it. One that skips nothing needs no fsync: preparing again reproduces it (``prepare.py``)."""
        self._decision = decision
        if not decision.skipped:
            return
        in_flight = self.store.get_meta("current_batch")
        assert in_flight is not None and in_flight["uid"] == batch_uid, "the decision is the running batch's"
        with self.store.write() as txn:
            txn.set_meta("current_batch", {**in_flight, "decision": decision.to_record()})

    def _every_shard(self, operation: dict[str, Any]) -> list[list[dict[str, Any]]]:
        return [[operation] for _ in range(self.shards.count)]

    async def _create_index(self, task: dict[str, Any], batch_uid: int) -> tuple[dict[int, Outcome], list]:
        uid = task["indexUid"]
        if self.store.get_index(uid) is not None:
            error = index_already_exists(uid).to_dict()
            return {task["uid"]: Outcome(FAILED, error=error)}, []
        await self._dispatch(batch_uid, self._every_shard({"op": "createIndex", "index": uid}))
        index = new_index_record(uid, now_ns(), task["params"].get("primaryKey"))
        return {task["uid"]: Outcome(SUCCEEDED)}, [("put", index)]

    async def _compact(self, task: dict[str, Any], batch_uid: int) -> tuple[dict[int, Outcome], list]:
        """Every shard compacts its store (all its indexes share it, see shard/index/compaction.py);
        the sizes are summed over the shards."""
        uid = task["indexUid"]
        if self.store.get_index(uid) is None:
            return {task["uid"]: Outcome(FAILED, error=index_not_found(uid).to_dict())}, []
        operation = {"op": "compactIndex", "index": uid, "task": task["uid"]}
        sizes = (await self._dispatch(batch_uid, self._every_shard(operation)))[str(task["uid"])]
        results = {name: human_size(sizes[name]) for name in ("preCompactionSize", "postCompactionSize")}
        return {task["uid"]: Outcome(SUCCEEDED, results=results)}, []

    async def _update_index(self, task: dict[str, Any], batch_uid: int) -> tuple[dict[int, Outcome], list]:
        uid = task["indexUid"]
        index = self.store.get_index(uid)
        if index is None:
            return {task["uid"]: Outcome(FAILED, error=index_not_found(uid).to_dict())}, []
        params = task["params"]
        changes: list[tuple[str, Any]] = []
        updated = {**index, "updatedNs": now_ns()}
        wanted = params.get("primaryKey")
        if wanted is not None and wanted != index["primaryKey"]:
            if index["primaryKey"] is not None and await self.shards.document_count(uid) > 0:
                error = ApiError(
                    "index_primary_key_already_exists",
                    f"Index `{uid}`: Index already has a primary key: `{index['primaryKey']}`.",
                ).to_dict()
                return {task["uid"]: Outcome(FAILED, error=error)}, []
            updated["primaryKey"] = wanted
        new_uid = params.get("newUid")
        if new_uid is not None and new_uid != uid:
            if self.store.get_index(new_uid) is not None:
                error = index_already_exists(new_uid).to_dict()
                return {task["uid"]: Outcome(FAILED, error=error)}, []
            await self._dispatch(
                batch_uid, self._every_shard({"op": "renameIndex", "from": uid, "to": new_uid})
            )
            changes.append(("delete", uid))
            changes.append(("relabel", {uid: new_uid}))
            updated["uid"] = new_uid
        changes.append(("put", updated))
        return {task["uid"]: Outcome(SUCCEEDED)}, changes

    async def _swap(self, task: dict[str, Any], batch_uid: int) -> tuple[dict[int, Outcome], list]:
        try:
            plan = plan_swap(self.store, task["params"]["swaps"])
        except ApiError as error:
            return {task["uid"]: Outcome(FAILED, error=error.to_dict())}, []
        await self._dispatch(batch_uid, [list(plan.operations) for _ in range(self.shards.count)])
        return {task["uid"]: Outcome(SUCCEEDED)}, plan.changes

    async def _index_batch(
        self, tasks: list[dict[str, Any]], batch_uid: int
    ) -> tuple[dict[int, Outcome], list]:
        uid = tasks[0]["indexUid"]
        index = self.store.get_index(uid)
        outcomes: dict[int, Outcome] = {}
        changes: list[tuple[str, Any]] = []
        deletion = next((t for t in tasks if t["type"] == "indexDeletion"), None)
        if deletion is not None:
            for task in tasks:
                if task is not deletion:
                    outcomes[task["uid"]] = Outcome(SUCCEEDED)
            if index is None:
                outcomes[deletion["uid"]] = Outcome(FAILED, error=index_not_found(uid).to_dict())
                return outcomes, changes
            counts = await self._dispatch(
                batch_uid,
                self._every_shard({"op": "deleteIndex", "index": uid, "task": deletion["uid"]}),
                cancelable=True,
            )
            outcomes[deletion["uid"]] = Outcome(
                SUCCEEDED, counts.get(str(deletion["uid"]), {"deletedDocuments": 0})
            )
            return outcomes, [("delete", uid)]
        runnable = []
        for task in tasks:
            creates = task["type"] == "documentAdditionOrUpdate" and task["params"].get(
                "allowIndexCreation", True
            )
            if index is None and not creates:
                outcomes[task["uid"]] = Outcome(FAILED, error=index_not_found(uid).to_dict())
            else:
                runnable.append(task)
        if not runnable:
            return outcomes, changes
        with self._progress.step(_DOCUMENT_STEPS, 0):
            payloads = {
                t["uid"]: self.store.get_payload(t["uid"]) or b"[]"
                for t in runnable
                if t["type"] == "documentAdditionOrUpdate"
            }
        primary_key = index["primaryKey"] if index else None
        settings = index.get("settings", {}) if index else {}
        with self._progress.step(_DOCUMENT_STEPS, 1):
            plan = await asyncio.to_thread(
                plan_documents,
                uid,
                runnable,
                payloads,
                primary_key,
                self.shards.count,
                uses_geo(settings),
                uses_geojson(settings),
            )
        if self._abort_requested:
            raise BatchAborted
        with self._progress.step(_DOCUMENT_STEPS, 2):
            counts = await self._dispatch(
                batch_uid, plan.operations, cancelable=True, embedders=_has_embedders(index)
            )
        for task in runnable:
            task_counts = counts.get(str(task["uid"]), {})
            error = plan.failures.get(task["uid"]) or task_counts.pop("error", None)
            if error is not None:
                outcomes[task["uid"]] = Outcome(FAILED, error=error)
            else:
                outcomes[task["uid"]] = Outcome(SUCCEEDED, task_counts)
        now = now_ns()
        if index is None:
            index = new_index_record(uid, now)
        changes.append(("put", {**index, "primaryKey": plan.primary_key, "updatedNs": now}))
        return outcomes, changes

    def _delete_tasks(self, tasks: list[dict[str, Any]]) -> dict[int, Outcome]:
        outcomes: dict[int, Outcome] = {}
        emptied_batches: set[int] = set()
        with self.store.write() as txn:
            for task in tasks:
                matched = matched_tasks(task["params"])
                deleted = 0
                for record in self.store.get_tasks(list(matched)):
                    if record["status"] in FINISHED and txn.get_task(record["uid"]) is not None:
                        txn.delete_task(record)
                        if record["batchUid"] is not None:
                            emptied_batches.add(record["batchUid"])
                        deleted += 1
                outcomes[task["uid"]] = Outcome(SUCCEEDED, {"deletedTasks": deleted})
            for batch_uid in emptied_batches:
                if not txn.bitmaps.get(f"batchUid:{batch_uid}", self.store.bitmap(f"batchUid:{batch_uid}")):
                    txn.delete_batch(batch_uid)
        return outcomes


def _has_embedders(index: dict[str, Any] | None) -> bool:
    """Whether the index (its catalog record, which shards' settings match between batches) embeds."""
    return index is not None and bool(index.get("settings", {}).get("embedders"))
