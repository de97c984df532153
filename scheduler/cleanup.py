"""The automatic cleanup of a full task queue: the reference's rule, run before each batch."""

from __future__ import annotations

from pyroaring import BitMap

from common.logging import get_logger
from common.task_vocabulary import ENQUEUED
from common.timefmt import format_datetime
from scheduler.server import SchedulerService
from scheduler.store import SchedulerStore

log = get_logger(__name__)
TASK_LIMIT = 1_000_000
CLEANUP_BATCH = 100_000


async def cleanup_old_tasks(store: SchedulerStore, service: SchedulerService) -> None:
    """Before a batch, past 1M tasks, enqueue a deletion of the oldest 100k finished ones (core.md §4.7)."""
    # A task has one status, so the statuses' sizes add up to the total without building their union
    # (which cost ~4% of the scheduler's time, before every batch).
    total = sum(len(uids) for uids in store.bitmaps_with_prefix("status:").values())
    if total < TASK_LIMIT or store.bitmap("type:taskDeletion") & store.bitmap(f"status:{ENQUEUED}"):
        return
    finished = store.all_task_uids() - store.bitmap(f"status:{ENQUEUED}")
    oldest = BitMap(list(finished)[:CLEANUP_BATCH])
    if len(oldest) < 2:
        log.warning("task queue is full but has too few finished tasks to delete")
        return
    newest = store.get_task(oldest.max())
    assert newest is not None
    original = (
        f"?beforeEnqueuedAt={format_datetime(newest['enqueuedNs'] + 1)}&statuses=succeeded,failed,canceled"
    )
    details = {"matchedTasks": 0, "deletedTasks": None, "originalFilter": original}
    await service.register("taskDeletion", None, {"filters": {"uids": list(oldest)}}, details)
