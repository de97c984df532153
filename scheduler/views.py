"""How stored tasks, batches and indexes are shown over the API: the public index and batch objects
(including the batch still being processed, which lives only in memory) and the seek-paginated list
envelope. It exists so that the gRPC service in ``scheduler/server.py`` only fetches and authorizes,
while the shape of what the API returns is decided here, next to ``public_task`` in ``scheduler/tasks.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from common.timefmt import format_datetime
from scheduler.batch_records import aggregate_details
from scheduler.store import SchedulerStore

if TYPE_CHECKING:
    from scheduler.queries import Processing


def public_index(index: dict[str, Any]) -> dict[str, Any]:
    return {
        "uid": index["uid"],
        "createdAt": format_datetime(index["createdNs"]),
        "updatedAt": format_datetime(index["updatedNs"]),
        "primaryKey": index["primaryKey"],
    }


def in_order(records: list[dict[str, Any]], uids: list[int]) -> list[dict[str, Any]]:
    by_uid = {r["uid"]: r for r in records}
    return [by_uid[u] for u in uids if u in by_uid]


def seek_response(
    results: list[Any], total: int, query: dict[str, Any], next_uid: int | None
) -> dict[str, Any]:
    first = results[0]["uid"] if results else None
    return {
        "results": results,
        "total": total,
        "limit": query.get("limit", 20),
        "from": first,
        "next": next_uid,
    }


def public_batch(stored: dict[str, Any]) -> dict[str, Any]:
    return {
        "uid": stored["uid"],
        "progress": None,
        "details": stored["details"],
        "stats": stored["stats"],
        "duration": stored["duration"],
        "startedAt": format_datetime(stored["startedNs"]),
        "finishedAt": format_datetime(stored["finishedNs"]),
        "batchStrategy": stored["batchStrategy"],
    }


def processing_batch(store: SchedulerStore, processing: Processing) -> dict[str, Any]:
    """The running batch as the reference shows it: where it is, its tasks' details so far (counts
    not known yet are null) and the trace of its steps up to now."""
    tasks = store.get_tasks(list(processing.task_uids))
    types: dict[str, int] = {}
    indexes: dict[str, int] = {}
    for task in tasks:
        types[task["type"]] = types.get(task["type"], 0) + 1
        if task["indexUid"] is not None:
            indexes[task["indexUid"]] = indexes.get(task["indexUid"], 0) + 1
    return {
        "uid": processing.batch_uid,
        "progress": processing.progress.view(),
        "details": aggregate_details(tasks, None),
        "stats": {
            "totalNbTasks": len(tasks),
            "status": {"processing": len(tasks)},
            "types": types,
            "indexUids": indexes,
            "progressTrace": processing.progress.trace(),
        },
        "duration": None,
        "startedAt": format_datetime(processing.started_ns),
        "finishedAt": None,
        "batchStrategy": processing.strategy,
    }
