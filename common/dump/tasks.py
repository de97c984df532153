"""Task lines of a dump (``tasks/queue.jsonl``) to and from Sift's task records.

The reference writes a task's kind and details as its internal enums (``{"documentImport": {...}}``,
``{"DocumentAdditionOrUpdate": {"received_documents": ...}}``), not as the public task object; this
module translates both ways, so a dump moves between the engines. A record's ``params`` (what the
executor needs to run a task still enqueued) are rebuilt from the kind.
"""

from __future__ import annotations

import re
from typing import Any

from pyroaring import BitMap

from common.task_vocabulary import TYPES
from common.timefmt import format_datetime, format_duration, parse_rfc3339

Record = dict[str, Any]

# Kinds the reference spells differently from the public type (the others are the public type).
_KIND_TO_TYPE = {
    "documentImport": "documentAdditionOrUpdate",
    "documentDeletionByFilter": "documentDeletion",
    "documentClear": "documentDeletion",
    "settings": "settingsUpdate",
    "tasksDeletion": "taskDeletion",
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _ns(text: str | None) -> int | None:
    return parse_rfc3339(text) if text is not None else None


def _duration(started: int | None, finished: int | None) -> str | None:
    return format_duration(finished - started) if started is not None and finished is not None else None


def _date(ns: int | None) -> str | None:
    return format_datetime(ns) if ns is not None else None


def record_from_line(line: dict[str, Any]) -> Record:
    """A dump's task line as a Sift task record (``scheduler/tasks.py::new_record`` shape)."""
    raw_kind = line["type"]
    kind, content = (raw_kind, {}) if isinstance(raw_kind, str) else next(iter(raw_kind.items()))
    task_type = _KIND_TO_TYPE.get(kind, kind)
    if task_type not in TYPES:
        raise ValueError(f"task {line['uid']} has an unknown type `{kind}`")
    record: Record = {
        "uid": line["uid"],
        "batchUid": line.get("batchUid"),
        "indexUid": line.get("indexUid"),
        "status": line["status"],
        "type": task_type,
        "canceledBy": line.get("canceledBy"),
        "details": _details_from_line(line.get("details")),
        "error": line.get("error"),
        "enqueuedNs": _ns(line["enqueuedAt"]),
        "startedNs": _ns(line.get("startedAt")),
        "finishedNs": _ns(line.get("finishedAt")),
        "params": _params_from_kind(kind, content),
    }
    if line.get("customMetadata") is not None:
        record["customMetadata"] = line["customMetadata"]
    return record


def _params_from_kind(kind: str, content: dict[str, Any]) -> dict[str, Any]:
    if kind == "documentImport":
        return {
            "method": "update" if content.get("method") == "UpdateDocuments" else "replace",
            "primaryKey": content.get("primary_key"),
            "skipCreation": False,
            "allowIndexCreation": content.get("allow_index_creation", True),
            "payloadFormat": "ndjson",
        }
    if kind == "documentDeletion":
        return {"kind": "ids", "ids": [str(i) for i in content.get("documents_ids", [])]}
    if kind == "documentDeletionByFilter":
        return {"kind": "filter", "filter": content.get("filter")}
    if kind == "documentClear":
        return {"kind": "clear"}
    if kind == "settings":
        creates = content.get("allow_index_creation", True)
        deletion = content.get("is_deletion", False)
        return {
            "settings": content.get("settings", {}),
            "allowIndexCreation": creates,
            "isDeletion": deletion,
        }
    if kind == "indexCreation":
        return {"primaryKey": content.get("primary_key")}
    if kind == "indexUpdate":
        params = {"primaryKey": content.get("primary_key")}
        if content.get("uid") is not None:
            params["newUid"] = content["uid"]
        return params
    if kind == "indexSwap":
        return {"swaps": content.get("swaps", [])}
    if kind == "documentEdition":
        return {key: content.get(key) for key in ("filter", "context", "function")}
    if kind in ("taskCancelation", "tasksDeletion"):
        matched = BitMap.deserialize(bytes(content.get("tasks") or BitMap().serialize()))
        return {"matched": matched.serialize().hex()}
    return {}


def _details_from_line(details: dict[str, Any] | None) -> dict[str, Any] | None:
    if not details:
        return None
    variant, fields = next(iter(details.items()))
    if variant == "SettingsUpdate":
        return dict(fields.get("settings", {}))
    public = {_camel(name): value for name, value in fields.items()}
    if variant == "IndexInfo":
        shown = {"primaryKey": public.get("primaryKey")}
        if public.get("newIndexUid") is not None:
            shown.update(oldIndexUid=public.get("oldIndexUid"), newIndexUid=public["newIndexUid"])
        return shown
    if variant == "DocumentDeletion":
        return {**public, "originalFilter": None}
    if variant == "DocumentDeletionByFilter":
        return {"providedIds": 0, "deletedDocuments": public.get("deletedDocuments"),
                "originalFilter": public.get("originalFilter")}  # fmt: skip
    if variant == "IndexCompaction":
        public.pop("indexUid", None)
    return public


def line_from_record(record: Record) -> dict[str, Any]:
    """A Sift task record as the reference writes it in a dump."""
    line: dict[str, Any] = {
        "uid": record["uid"],
        "batchUid": record["batchUid"],
        "indexUid": record["indexUid"],
        "status": record["status"],
        "type": _kind_of(record),
    }
    if record.get("canceledBy") is not None:
        line["canceledBy"] = record["canceledBy"]
    details = _details_of(record)
    if details is not None:
        line["details"] = details
    if record.get("error") is not None:
        line["error"] = record["error"]
    line["enqueuedAt"] = _date(record["enqueuedNs"])
    for name in ("started", "finished"):
        if record.get(f"{name}Ns") is not None:
            line[f"{name}At"] = _date(record[f"{name}Ns"])
    if "customMetadata" in record:
        line["customMetadata"] = record["customMetadata"]
    return line


def _kind_of(record: Record) -> Any:
    task_type, params, details = record["type"], record.get("params", {}), record.get("details") or {}
    if task_type == "documentAdditionOrUpdate":
        return {"documentImport": {
            "primary_key": params.get("primaryKey"),
            "method": "UpdateDocuments" if params.get("method") == "update" else "ReplaceDocuments",
            "documents_count": details.get("receivedDocuments", 0),
            "allow_index_creation": params.get("allowIndexCreation", True),
        }}  # fmt: skip
    if task_type == "documentDeletion":
        deletion = params.get("kind")
        if deletion == "clear":
            return "documentClear"
        if deletion == "filter":
            return {"documentDeletionByFilter": {"filter": params.get("filter")}}
        return {"documentDeletion": {"documents_ids": params.get("ids", [])}}
    if task_type == "settingsUpdate":
        settings = params.get("settings", {})
        # A reset route's update sets every value it names to null (read from a dump: as written).
        resets = bool(settings) and all(value is None for value in settings.values())
        is_deletion = params.get("isDeletion", resets)
        return {"settings": {"settings": settings, "is_deletion": is_deletion,
                             "allow_index_creation": params.get("allowIndexCreation", True)}}  # fmt: skip
    if task_type == "indexCreation":
        return {"indexCreation": {"primary_key": params.get("primaryKey")}}
    if task_type == "indexUpdate":
        return {"indexUpdate": {"primary_key": params.get("primaryKey"), "uid": params.get("newUid")}}
    if task_type in ("indexDeletion", "snapshotCreation"):
        return task_type
    if task_type == "indexSwap":
        return {"indexSwap": {"swaps": params.get("swaps", [])}}
    if task_type == "indexCompaction":
        return {"indexCompaction": {"index_uid": record["indexUid"]}}
    if task_type == "documentEdition":
        return {"documentEdition": {key: params.get(key) for key in ("filter", "context", "function")}}
    if task_type in ("taskCancelation", "taskDeletion"):
        matched = BitMap.deserialize(bytes.fromhex(params["matched"])) if "matched" in params else BitMap()
        kind = "tasksDeletion" if task_type == "taskDeletion" else task_type
        return {kind: {"query": details.get("originalFilter"), "tasks": list(matched.serialize())}}
    if task_type == "dumpCreation":
        return {"dumpCreation": {"keys": [], "instance_uid": None}}
    return {task_type: {_snake(name): value for name, value in params.items()}}


def _details_of(record: Record) -> dict[str, Any] | None:
    task_type, details = record["type"], record.get("details")
    if details is None:
        return None
    snake = {_snake(name): value for name, value in details.items()}
    if task_type == "documentAdditionOrUpdate":
        return {"DocumentAdditionOrUpdate": snake}
    if task_type == "documentDeletion":
        deletion = record.get("params", {}).get("kind")
        if deletion == "clear":
            return {"ClearAll": {"deleted_documents": details.get("deletedDocuments")}}
        if deletion == "filter":
            return {"DocumentDeletionByFilter": {
                "original_filter": details.get("originalFilter"),
                "deleted_documents": details.get("deletedDocuments"),
            }}  # fmt: skip
        return {"DocumentDeletion": {
            "provided_ids": details.get("providedIds"), "deleted_documents": details.get("deletedDocuments"),
        }}  # fmt: skip
    if task_type == "settingsUpdate":
        return {"SettingsUpdate": {"settings": details}}
    if task_type in ("indexCreation", "indexUpdate"):
        return {"IndexInfo": {
            "primary_key": details.get("primaryKey"),
            "new_index_uid": details.get("newIndexUid"),
            "old_index_uid": details.get("oldIndexUid"),
        }}  # fmt: skip
    if task_type == "indexDeletion":
        return {"ClearAll": {"deleted_documents": details.get("deletedDocuments")}}
    if task_type == "indexCompaction":
        return {"IndexCompaction": {"index_uid": record["indexUid"], **snake}}
    if task_type == "dumpCreation":
        return {"Dump": {"dump_uid": details.get("dumpUid")}}
    variant = {"indexSwap": "IndexSwap", "taskDeletion": "TaskDeletion"}.get(task_type)
    return {variant or task_type[:1].upper() + task_type[1:]: snake}


def batch_from_line(line: dict[str, Any], task_uids: list[int]) -> Record:
    """A dump's batch line as a stored batch (``scheduler/executor.py`` shape)."""
    started, finished = _ns(line.get("startedAt")), _ns(line.get("finishedAt"))
    return {
        "uid": line["uid"],
        "progress": None,
        "details": line.get("details", {}),
        "stats": line.get("stats", {}),
        "duration": _duration(started, finished),
        "startedNs": started,
        "finishedNs": finished,
        "batchStrategy": line.get("stopReason", ""),
        "tasks": sorted(task_uids),
    }


def line_from_batch(stored: Record, enqueued_ns: list[int]) -> dict[str, Any]:
    """A stored batch as the reference writes it; ``enqueued_ns`` are its tasks' enqueue times."""
    line: dict[str, Any] = {
        "uid": stored["uid"],
        "details": stored["details"],
        "stats": stored["stats"],
        "startedAt": _date(stored["startedNs"]),
        "finishedAt": _date(stored["finishedNs"]),
    }
    if enqueued_ns:
        line["enqueuedAt"] = {"earliest": _date(min(enqueued_ns)), "oldest": _date(max(enqueued_ns))}
    line["stopReason"] = stored["batchStrategy"]
    return line
