"""Which enqueued tasks form the next batch (core.md §4.2 priorities, §4.3 auto-batching)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyroaring import BitMap

from common.task_vocabulary import ENQUEUED
from scheduler.rules import RULE_TASK_TYPES
from scheduler.store import SchedulerStore

_ALONE = {"indexCreation", "indexUpdate", "indexSwap", "documentEdition", "dumpCreation", "export"}


@dataclass(frozen=True)
class BatchPlan:
    tasks: list[dict[str, Any]]
    strategy: str


@dataclass(frozen=True)
class Limits:
    max_tasks: int | None
    max_payload_bytes: int


def plan_next_batch(store: SchedulerStore, limits: Limits) -> BatchPlan | None:
    enqueued = store.bitmap(f"status:{ENQUEUED}")
    if not enqueued:
        return None
    cancelations = enqueued & store.bitmap("type:taskCancelation")
    if cancelations:
        return BatchPlan(store.get_tasks([cancelations.max()]), "batched the most recent task cancelation")
    upgrades = enqueued & store.bitmap("type:upgradeDatabase")
    if upgrades:
        return BatchPlan(store.get_tasks(list(upgrades)), "batched all enqueued database upgrades")
    deletions = enqueued & store.bitmap("type:taskDeletion")
    if deletions:
        return BatchPlan(store.get_tasks(list(deletions)), "batched all enqueued task deletions")
    compactions = enqueued & store.bitmap("type:indexCompaction")
    if compactions:
        oldest = store.get_tasks([compactions.min()])[0]
        return BatchPlan([oldest], _alone(oldest))
    snapshots = enqueued & store.bitmap("type:snapshotCreation")
    if snapshots:
        return BatchPlan(
            store.get_tasks(list(snapshots)),
            "stopped after the last task of type `snapshotCreation` because they cannot be batched with "
            "tasks of any other type.",
        )
    dumps = enqueued & store.bitmap("type:dumpCreation")
    if dumps:
        oldest = store.get_tasks([dumps.min()])[0]
        return BatchPlan([oldest], _alone(oldest))
    first = store.get_tasks([enqueued.min()])[0]
    if first["indexUid"] is None or first["type"] in _ALONE or first["type"] == "indexDeletion":
        return BatchPlan([first], _alone(first))
    same_index = enqueued & store.bitmap(f"indexUid:{first['indexUid']}")
    return _autobatch(store, first, same_index, limits)


def _alone(task: dict[str, Any]) -> str:
    return (
        f"created batch containing only task with id {task['uid']} of type `{task['type']}` "
        "that cannot be batched with any other task."
    )


def _autobatch(store: SchedulerStore, first: dict[str, Any], candidates: BitMap, limits: Limits) -> BatchPlan:
    index = store.get_index(first["indexUid"])
    batch = [first]
    payload = store.payload_size(first["uid"])
    primary_key = (index or {}).get("primaryKey") or first["params"].get("primaryKey")
    accepts = _follower_rule(first)
    uids = list(candidates)[1:]
    for position, uid in enumerate(uids):
        if limits.max_tasks is not None and len(batch) >= limits.max_tasks:
            return BatchPlan(batch, f"batched up to configured batch limit of {limits.max_tasks} tasks")
        task = store.get_tasks([uid])[0]
        if not accepts(task, index is not None, batch):
            return BatchPlan(batch, f"stopped batching before task {uid} of type `{task['type']}`")
        if task["type"] == "documentAdditionOrUpdate":
            wanted = task["params"].get("primaryKey")
            if wanted is not None and primary_key is not None and wanted != primary_key:
                return BatchPlan(batch, f"stopped batching before task {uid}: its primary key differs")
            primary_key = primary_key or wanted
            size = store.payload_size(uid)
            if payload + size > limits.max_payload_bytes:
                return BatchPlan(batch, "batched up to the configured total payload size")
            payload += size
        batch.append(task)
        if task["type"] == "indexDeletion":
            remaining = len(uids) - position - 1
            return BatchPlan(batch, "stopped at an index deletion" if remaining else _all(first))
    return BatchPlan(batch, _all(first))


def _all(first: dict[str, Any]) -> str:
    return f"batched all enqueued tasks for index `{first['indexUid']}`"


def _deletion_kind(task: dict[str, Any]) -> str | None:
    return task["params"].get("kind") if task["type"] == "documentDeletion" else None


def _follower_rule(first: dict[str, Any]) -> Callable[[dict[str, Any], bool, list[dict[str, Any]]], bool]:
    """Whether ``task`` may join a batch that started with ``first`` (the table of §4.3)."""
    first_kind = "addition" if first["type"] == "documentAdditionOrUpdate" else _deletion_kind(first)
    first_kind = first_kind or first["type"]

    def accepts(task: dict[str, Any], index_exists: bool, batch: list[dict[str, Any]]) -> bool:
        kind = (
            "addition" if task["type"] == "documentAdditionOrUpdate" else _deletion_kind(task) or task["type"]
        )
        if kind == "indexDeletion":
            return True
        if first_kind == "addition":
            return kind in ("addition", "ids", "clear")
        if first_kind in ("ids", "filter"):
            if kind in ("ids", "filter", "clear"):
                return True
            has_filter = any(_deletion_kind(t) == "filter" for t in batch)
            return kind == "addition" and (index_exists or has_filter)
        if first_kind == "clear":
            return kind in ("ids", "filter", "clear")
        if first_kind == "settingsUpdate":
            return kind in ("settingsUpdate", "clear")
        if first_kind in RULE_TASK_TYPES:
            return kind in RULE_TASK_TYPES
        return False

    return accepts
