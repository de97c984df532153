"""A ``taskCancelation`` batch: the enqueued tasks it matches are canceled, and join its batch.

A processing batch the cancelation matched was rolled back before (``Executor.request_abort``).
"""

from __future__ import annotations

from typing import Any

from common.task_vocabulary import CANCELED, ENQUEUED, SUCCEEDED
from common.timefmt import now_ns
from scheduler.store import SchedulerStore, Txn
from scheduler.tasks import Outcome, finish, matched_tasks


def cancel_enqueued(store: SchedulerStore, task: dict[str, Any]) -> dict[int, Outcome]:
    """Cancel the matched tasks still enqueued, in one transaction."""
    matched = matched_tasks(task["params"])
    canceled = 0
    finished = now_ns()
    with store.write() as txn:
        for record in store.get_tasks(list(matched & store.bitmap(f"status:{ENQUEUED}"))):
            previous = dict(record)
            record["canceledBy"] = task["uid"]
            finish(record, CANCELED, finished)
            txn.put_task(record, previous)
            txn.delete_payload(record["uid"])
            canceled += 1
    return {task["uid"]: Outcome(SUCCEEDED, {"canceledTasks": canceled})}


def join_canceled(
    store: SchedulerStore, txn: Txn, tasks: list[dict[str, Any]], batch_uid: int, started: int, finished: int
) -> list[dict[str, Any]]:
    """The tasks the batch's cancelations canceled take its uid and times and count in its stats and
    details, as in the reference (a task already in a batch keeps it)."""
    joined = []
    for task in tasks:
        if task["type"] != "taskCancelation":
            continue
        for record in map(txn.get_task, store.bitmap(f"canceledBy:{task['uid']}")):
            if record is None or record["batchUid"] is not None:
                continue
            previous = dict(record)
            record.update(batchUid=batch_uid, startedNs=started, finishedNs=finished)
            txn.put_task(record, previous)
            joined.append(record)
    return joined
