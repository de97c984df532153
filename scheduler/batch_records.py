"""What a finished batch writes besides its tasks' statuses: its error, its summed details, and the
catalog changes its tasks made (index records, relabelled task history)."""

from __future__ import annotations

from typing import Any

import grpc

from common.errors import ApiError
from common.task_vocabulary import CANCELED, FINISHED, SUCCEEDED
from common.timefmt import format_duration
from scheduler.batching import BatchPlan
from scheduler.cancelation import join_canceled
from scheduler.objstore import ObjectStorageError
from scheduler.store import Txn
from scheduler.tasks import COUNT_DETAILS, Outcome, finish


def batch_error(error: Exception) -> ApiError:
    """Storage failures reported by a shard keep their meaning; anything else is internal."""
    if isinstance(error, grpc.aio.AioRpcError):
        if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
            return ApiError(
                "no_space_left_on_device", f"No space left to store the batch: {error.details()}."
            )
        if error.code() == grpc.StatusCode.DATA_LOSS:
            return ApiError("io_error", f"A shard could not write the batch: {error.details()}.")
    if isinstance(error, ObjectStorageError):
        return ApiError("s_3_snapshot_server_error", f"{error}.")
    return ApiError("internal", f"An internal error occurred: {error}.")


def apply_catalog_change(txn: Txn, change: str, value: Any) -> None:
    if change == "put":
        txn.put_index(value)
    elif change == "delete":
        txn.delete_index(value)
    elif change == "relabel":
        _relabel_tasks(txn, value)
    elif change == "putRule":
        txn.put_rule(value)
    elif change == "deleteRule":
        txn.delete_rule(value)
    elif change == "clearRules":
        txn.clear_rules()


def _relabel_tasks(txn: Txn, mapping: dict[str, str]) -> None:
    """History follows the data: earlier tasks of a renamed or swapped index take its new uid."""
    records = [r for old in mapping for r in txn.store.get_tasks(list(txn.store.bitmap(f"indexUid:{old}")))]
    for record in records:
        previous = dict(record)
        record["indexUid"] = mapping[previous["indexUid"]]
        txn.put_task(record, previous)


def aggregate_details(tasks: list[dict[str, Any]], outcomes: dict[int, Outcome] | None) -> dict[str, Any]:
    """Sum the tasks' counts (unknown counts of failed tasks count as 0); a later task's other values win.

    Other values are settings, filters and the like: the batch shows their merged effect.
    ``outcomes`` None: the batch is still running, and a count no task knows yet stays null.
    """
    details: dict[str, Any] = {}
    for task in tasks:
        outcome = outcomes[task["uid"]] if outcomes is not None else None
        counts = outcome.counts if outcome is not None else {}
        results = outcome.results if outcome is not None and outcome.status == SUCCEEDED else {}
        for name, value in {**(task["details"] or {}), **results}.items():
            counted = counts.get(name, value)
            if name in COUNT_DETAILS:
                previous = details.get(name)
                if counted is None and outcomes is None:
                    details.setdefault(name, None)
                else:
                    details[name] = (previous if isinstance(previous, int) else 0) + (counted or 0)
            else:
                details[name] = counted
    return details


def write_batch(
    txn: Txn,
    plan: BatchPlan,
    batch_uid: int,
    started: int,
    finished: int,
    outcomes: dict[int, Outcome],
    catalog: list[tuple[str, Any]],
    trace: dict[str, str],
) -> list[dict[str, Any]]:
    """Everything a finished batch commits in ``txn``: catalog changes, each task's outcome, the batch
    record, the in-flight record cleared. Returns the finished tasks, for the batch's notifications.
    ``outcomes`` gains the tasks its cancelations canceled."""
    for change, value in catalog:
        apply_catalog_change(txn, change, value)
    statuses: dict[str, int] = {}
    types: dict[str, int] = {}
    indexes: dict[str, int] = {}
    notified: list[dict[str, Any]] = []
    canceled = join_canceled(txn.store, txn, plan.tasks, batch_uid, started, finished)
    outcomes.update((record["uid"], Outcome(CANCELED)) for record in canceled)
    for joined in canceled:
        notified.append(joined)
        _count(joined, CANCELED, statuses, types, indexes)
    for task in plan.tasks:
        record = txn.get_task(task["uid"])
        if record is None or record["status"] in FINISHED:
            continue
        previous = dict(record)
        outcome = outcomes[task["uid"]]
        record["batchUid"] = batch_uid
        record["startedNs"] = started
        finish(record, outcome.status, finished, outcome.counts, outcome.error, outcome.results)
        txn.put_task(record, previous)
        txn.delete_payload(record["uid"])
        notified.append(record)
        _count(record, outcome.status, statuses, types, indexes)
    members = [*canceled, *plan.tasks]
    txn.put_batch(
        {
            "uid": batch_uid,
            "progress": None,
            "details": aggregate_details(members, outcomes),
            "stats": {
                "totalNbTasks": len(members),
                "status": statuses,
                "types": types,
                "indexUids": indexes,
                "progressTrace": trace,
            },
            "duration": format_duration(finished - started),
            "startedNs": started,
            "finishedNs": finished,
            "batchStrategy": plan.strategy,
            "tasks": sorted(t["uid"] for t in members),
        }
    )
    txn.set_meta("current_batch", None)
    return notified


def _count(
    record: dict[str, Any],
    status: str,
    statuses: dict[str, int],
    types: dict[str, int],
    indexes: dict[str, int],
) -> None:
    """One task in its batch's stats."""
    statuses[status] = statuses.get(status, 0) + 1
    types[record["type"]] = types.get(record["type"], 0) + 1
    if record["indexUid"] is not None:
        indexes[record["indexUid"]] = indexes.get(record["indexUid"], 0) + 1
