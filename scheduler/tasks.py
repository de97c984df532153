"""Task records: what is stored, and the public task object the API shows (core.md §3.4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyroaring import BitMap

from common.task_vocabulary import (
    ENQUEUED,
    SUCCEEDED,
)
from common.timefmt import format_datetime, format_duration

_COUNT_FIELDS = (
    "receivedDocuments", "indexedDocuments", "deletedDocuments", "canceledTasks", "deletedTasks",
    "updatedRules",
)  # fmt: skip
_ALWAYS_KNOWN = ("receivedDocuments", "providedIds", "matchedTasks")
# Details that count things: a batch sums them over its tasks.
COUNT_DETAILS = frozenset({*_COUNT_FIELDS, *_ALWAYS_KNOWN})


@dataclass
class Outcome:
    """How a task of a batch ended: what ``finish`` records once the batch commits."""

    status: str
    counts: dict[str, int] = field(default_factory=dict)
    error: dict[str, str] | None = None
    results: dict[str, Any] = field(default_factory=dict)
    """Details a task has only once it succeeded (``indexCompaction``'s sizes): added to ``details``."""


def new_record(
    uid: int,
    task_type: str,
    index_uid: str | None,
    details: dict[str, Any] | None,
    params: dict[str, Any],
    enqueued_ns: int,
    custom_metadata: str | None,
) -> dict[str, Any]:
    """A stored task: public fields plus ``params`` (what the executor needs) and timestamps in ns."""
    record: dict[str, Any] = {
        "uid": uid,
        "batchUid": None,
        "indexUid": index_uid,
        "status": ENQUEUED,
        "type": task_type,
        "canceledBy": None,
        "details": details,
        "error": None,
        "enqueuedNs": enqueued_ns,
        "startedNs": None,
        "finishedNs": None,
        "params": params,
    }
    if custom_metadata is not None:
        record["customMetadata"] = custom_metadata
    return record


def public_task(record: dict[str, Any]) -> dict[str, Any]:
    started, finished = record["startedNs"], record["finishedNs"]
    task: dict[str, Any] = {
        "uid": record["uid"],
        "batchUid": record["batchUid"],
        "indexUid": record["indexUid"],
        "status": record["status"],
        "type": record["type"],
        "canceledBy": record["canceledBy"],
    }
    if record["details"] is not None:
        task["details"] = record["details"]
    task["error"] = record["error"]
    task["duration"] = (
        format_duration(finished - started) if started is not None and finished is not None else None
    )
    task["enqueuedAt"] = format_datetime(record["enqueuedNs"])
    task["startedAt"] = format_datetime(started) if started is not None else None
    task["finishedAt"] = format_datetime(finished) if finished is not None else None
    if "customMetadata" in record:
        task["customMetadata"] = record["customMetadata"]
    return task


def summarized_task(record: dict[str, Any]) -> dict[str, Any]:
    summary = {
        "taskUid": record["uid"],
        "indexUid": record["indexUid"],
        "status": record["status"],
        "type": record["type"],
        "enqueuedAt": format_datetime(record["enqueuedNs"]),
    }
    if "customMetadata" in record:
        summary["customMetadata"] = record["customMetadata"]
    return summary


def finish(
    record: dict[str, Any],
    status: str,
    finished_ns: int,
    counts: dict[str, int] | None = None,
    error: dict[str, str] | None = None,
    results: dict[str, Any] | None = None,
) -> None:
    """Mark a task finished; unknown counts become 0 on failure or cancelation, as the contract says.

    ``results`` (see ``Outcome``) join the details of a succeeded task."""
    record["status"] = status
    record["finishedNs"] = finished_ns
    record["error"] = error
    details = record["details"]
    if details is None:
        return
    for name in _COUNT_FIELDS:
        if name in details and name not in _ALWAYS_KNOWN:
            details[name] = (counts or {}).get(name, 0) if status == SUCCEEDED else 0
    for name, value in (counts or {}).items():
        if name in details and status == SUCCEEDED:
            details[name] = value
    if status == SUCCEEDED:
        details.update(results or {})


def matched_tasks(params: dict[str, Any]) -> BitMap:
    """The tasks a cancelation or deletion matched when it was registered (stored as a hex bitmap)."""
    return BitMap.deserialize(bytes.fromhex(params["matched"]))


def store_matched_tasks(params: dict[str, Any], matched: BitMap) -> None:
    params["matched"] = matched.serialize().hex()
