"""Task and batch filters (core.md §3.4.4, §3.5), resolved on the per-field bitmaps."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyroaring import BitMap

from common.index_patterns import IndexPatterns
from common.task_vocabulary import ENQUEUED, PROCESSING
from scheduler.progress import Progress
from scheduler.store import SchedulerStore

_LIST_FILTERS = {
    "statuses": "status",
    "types": "type",
    "indexUids": "indexUid",
    "batchUids": "batchUid",
    "canceledBy": "canceledBy",
}
_DATE_FILTERS = {
    "beforeEnqueuedAt": ("enqueuedNs", False),
    "afterEnqueuedAt": ("enqueuedNs", True),
    "beforeStartedAt": ("startedNs", False),
    "afterStartedAt": ("startedNs", True),
    "beforeFinishedAt": ("finishedNs", False),
    "afterFinishedAt": ("finishedNs", True),
}


@dataclass(frozen=True)
class Processing:
    """The batch being processed: its tasks show as ``processing`` though stored as ``enqueued``."""

    batch_uid: int
    started_ns: int
    task_uids: BitMap
    strategy: str = "unspecified"
    progress: Progress = dataclasses.field(default_factory=Progress, compare=False)
    """Where the batch is, what its steps took so far (``scheduler/progress.py``)."""

    def overlay(self, record: dict[str, Any]) -> dict[str, Any]:
        if record["uid"] in self.task_uids and record["status"] == ENQUEUED:
            return {**record, "status": PROCESSING, "batchUid": self.batch_uid, "startedNs": self.started_ns}
        return record


def match_tasks(store: SchedulerStore, filters: dict[str, Any], processing: Processing | None) -> BitMap:
    """Uids of the tasks matching every given filter (absent filter or ``None`` = no constraint).

    ``authorizedIndexes`` (index patterns of the request's API key) keeps only what the key may see.
    """
    matched = store.all_task_uids()
    if filters.get("authorizedIndexes") is not None:
        matched &= visible_tasks(store, filters["authorizedIndexes"])
    if filters.get("uids") is not None:
        matched &= BitMap(filters["uids"])
    for name, field in _LIST_FILTERS.items():
        values = filters.get(name)
        if values is None:
            continue
        selected = BitMap()
        for value in values:
            selected |= _field_bitmap(store, field, value, processing)
        matched &= selected
    return _filter_dates(store, matched, filters, processing)


def visible_tasks(store: SchedulerStore, patterns: list[str]) -> BitMap:
    """Tasks of the indexes the patterns allow. Global tasks (dumps, swaps, task cancelations, ...)
    belong to no single index and are hidden from index-restricted keys, as in the reference engine."""
    allowed = IndexPatterns(patterns)
    visible = BitMap()
    for uid, tasks in store.bitmaps_with_prefix("indexUid:").items():
        if allowed.allows(uid):
            visible |= tasks
    return visible


def hidden_batches(store: SchedulerStore, visible: BitMap, processing: Processing | None) -> BitMap:
    """Batches holding a task the key may not see: hidden whole, like the tasks' indexes."""
    batches = store.bitmaps_with_prefix("batchUid:").items()
    hidden = BitMap(int(uid) for uid, tasks in batches if tasks - visible)
    if processing is not None and processing.task_uids - visible:
        hidden.add(processing.batch_uid)
    return hidden


def _field_bitmap(store: SchedulerStore, field: str, value: Any, processing: Processing | None) -> BitMap:
    if field == "status" and processing is not None:
        if value == PROCESSING:
            return BitMap(processing.task_uids) & store.bitmap(f"status:{ENQUEUED}")
        if value == ENQUEUED:
            return store.bitmap(f"status:{ENQUEUED}") - processing.task_uids
    if field == "batchUid" and processing is not None and value == processing.batch_uid:
        return BitMap(processing.task_uids)
    return store.bitmap(f"{field}:{value}")


def _filter_dates(
    store: SchedulerStore, matched: BitMap, filters: dict[str, Any], processing: Processing | None
) -> BitMap:
    checks: list[Callable[[dict[str, Any]], bool]] = []
    for name, (field, is_after) in _DATE_FILTERS.items():
        bound = filters.get(name)
        if bound is None:
            continue
        checks.append(_date_check(field, bound, is_after))
    if not checks or not matched:
        return matched
    kept = BitMap()
    for record in store.get_tasks(list(matched)):
        view = processing.overlay(record) if processing else record
        if all(check(view) for check in checks):
            kept.add(record["uid"])
    return kept


def _date_check(field: str, bound: int, is_after: bool) -> Callable[[dict[str, Any]], bool]:
    def check(record: dict[str, Any]) -> bool:
        value = record[field]
        if value is None:
            return False
        return bool(value > bound if is_after else value < bound)

    return check


def seek_page(uids: BitMap, limit: int, from_uid: int | None, reverse: bool) -> tuple[list[int], int | None]:
    """One page of uids, newest first unless ``reverse``; ``from`` is inclusive. Returns (page, next)."""
    window = BitMap(uids)
    if from_uid is not None:
        bounds = BitMap()
        if reverse:
            bounds.add_range(from_uid, 1 << 32)
        else:
            bounds.add_range(0, from_uid + 1)
        window &= bounds
    ordered = list(window[: limit + 1]) if reverse else list(window[max(0, len(window) - limit - 1) :])[::-1]
    next_uid = ordered.pop() if len(ordered) > limit else None
    return ordered, next_uid
