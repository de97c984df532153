"""``/tasks`` and ``/batches`` (core.md §3.4, §3.5): filters validated here, resolved by the scheduler."""

from __future__ import annotations

from typing import Any

from sanic import Blueprint, HTTPResponse, Request
from sanic.response import raw

from common.errors import ApiError, invalid_index_uid
from common.task_vocabulary import STATUSES, TYPES
from common.timefmt import parse_filter_date
from common.validation import STAR, Param, QueryKind, QuerySchema
from gateway.auth.requests import with_visibility
from gateway.http.requests import is_valid_index_uid, parse_query
from gateway.http.responses import json_response
from gateway.task_documents import task_documents

bp = Blueprint("tasks")

_U32_MAX = 2**32 - 1
_DATES = (
    "afterEnqueuedAt",
    "beforeEnqueuedAt",
    "afterStartedAt",
    "beforeStartedAt",
    "afterFinishedAt",
    "beforeFinishedAt",
)


def _status_check(value: str) -> str | None:
    if value.lower() in STATUSES:
        return None
    return f"`{value}` is not a valid task status. Available statuses are " + _ticks(STATUSES) + "."


def _type_check(value: str) -> str | None:
    if value.lower() in {t.lower() for t in TYPES}:
        return None
    return f"`{value}` is not a valid task type. Available types are " + _ticks(TYPES) + "."


def _index_check(value: str) -> str | None:
    if is_valid_index_uid(value):
        return None
    return invalid_index_uid(value).message


def _date_check(value: str) -> str | None:
    try:
        parse_filter_date(value, after=False)
    except ValueError:
        return (
            f"`{value}` is an invalid date-time. It should follow the YYYY-MM-DD or RFC 3339 date-time"
            " format."
        )
    return None


def _ticks(values: tuple[str, ...]) -> str:
    return ", ".join(f"`{v}`" for v in values)


def _date_param(name: str) -> Param:
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
    return Param(QueryKind.STRING, code=f"invalid_task_{snake}", star=True, check=_date_check)


_FILTERS: dict[str, Param] = {
    "uids": Param(QueryKind.INTEGER_LIST, code="invalid_task_uids", star=True, maximum=_U32_MAX),
    "batchUids": Param(QueryKind.INTEGER_LIST, code="invalid_batch_uids", star=True, maximum=_U32_MAX),
    "canceledBy": Param(QueryKind.INTEGER_LIST, code="invalid_task_canceled_by", star=True, maximum=_U32_MAX),
    "types": Param(QueryKind.STRING_LIST, code="invalid_task_types", star=True, check=_type_check),
    "statuses": Param(QueryKind.STRING_LIST, code="invalid_task_statuses", star=True, check=_status_check),
    "indexUids": Param(QueryKind.STRING_LIST, code="invalid_index_uid", star=True, check=_index_check),
    **{name: _date_param(name) for name in _DATES},
}
_PAGING: dict[str, Param] = {
    "limit": Param(QueryKind.POSITIVE_INTEGER, code="invalid_task_limit", maximum=_U32_MAX),
    "from": Param(QueryKind.POSITIVE_INTEGER, code="invalid_task_from", maximum=_U32_MAX),
    "reverse": Param(QueryKind.BOOLEAN, code="invalid_task_reverse"),
}
_LIST_QUERY = QuerySchema(
    {
        **_PAGING,
        **{k: _FILTERS[k] for k in ("batchUids", "uids", "canceledBy", "types", "statuses", "indexUids")},
        **{k: _FILTERS[k] for k in _DATES},
    }
)
_BULK_QUERY = QuerySchema(
    {
        **{k: _FILTERS[k] for k in ("uids", "batchUids", "canceledBy", "types", "statuses", "indexUids")},
        **{k: _FILTERS[k] for k in _DATES},
    }
)
_CANONICAL_TYPES = {t.lower(): t for t in TYPES}


def _scheduler_filters(query: dict[str, Any]) -> dict[str, Any]:
    """Validated parameters in the scheduler's terms: ``*`` means no constraint, dates in ns."""
    filters: dict[str, Any] = {}
    for name, value in query.items():
        if value is STAR:
            continue
        if name == "statuses":
            value = [v.lower() for v in value]
        elif name == "types":
            value = [_CANONICAL_TYPES[v.lower()] for v in value]
        elif name in _DATES:
            value = parse_filter_date(value, after=name.startswith("after"))
        filters[name] = value
    return filters


def _uid_path(raw: str, code: str, what: str) -> int:
    if not raw.isdigit() or int(raw) > _U32_MAX:
        raise ApiError(code, f"{what} uid `{raw}` is invalid. It should only contain numeric characters.")
    return int(raw)


@bp.get("/tasks", ctx_action="tasks.get")
async def list_tasks(request: Request) -> HTTPResponse:
    query = with_visibility(request, _scheduler_filters(parse_query(request, _LIST_QUERY)))
    return json_response(await request.app.ctx.cluster.ask_scheduler("ListTasks", query))


@bp.get("/tasks/<task_uid:str>", ctx_action="tasks.get")
async def get_task(request: Request, task_uid: str) -> HTTPResponse:
    uid = _uid_path(task_uid, "invalid_task_uids", "Task")
    query = with_visibility(request, {"uid": uid})
    return json_response(await request.app.ctx.cluster.ask_scheduler("GetTask", query))


async def _bulk(request: Request, task_type: str, verb: str, counted: str) -> HTTPResponse:
    raw = parse_query(request, _BULK_QUERY)
    if not raw:
        raise ApiError(
            "missing_task_filters",
            f"Query parameters to filter the tasks to {verb} are missing. Available query parameters are: "
            "`uids`, `indexUids`, `statuses`, `types`, `canceledBy`, `beforeEnqueuedAt`, `afterEnqueuedAt`, "
            "`beforeStartedAt`, `afterStartedAt`, `beforeFinishedAt`, `afterFinishedAt`.",
        )
    original = "?" + request.query_string
    params = {
        "filters": with_visibility(request, _scheduler_filters(raw)),
        "details": {"matchedTasks": 0, counted: None, "originalFilter": original},
    }
    return json_response(await request.app.ctx.cluster.register_task(task_type, None, params))


@bp.post("/tasks/cancel", ctx_action="tasks.cancel")
async def cancel_tasks(request: Request) -> HTTPResponse:
    return await _bulk(request, "taskCancelation", "cancel", "canceledTasks")


@bp.delete("/tasks", ctx_action="tasks.delete")
async def delete_tasks(request: Request) -> HTTPResponse:
    return await _bulk(request, "taskDeletion", "delete", "deletedTasks")


_TASK_DOCUMENTS_OFF = (
    "Getting the documents of an enqueued task requires enabling the `get task documents route` experimental"
    " feature. See https://github.com/orgs/meilisearch/discussions/808"
)
_COMPACTION_OFF = (
    "Using the /tasks/compact route requires enabling the `task queue compaction route` experimental"
    " feature. See https://github.com/orgs/meilisearch/discussions/883"
)
_SIZE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _require_feature(request: Request, feature: str, message: str) -> None:
    """Checked before anything else of the request, as the reference does."""
    if not request.app.ctx.features.enabled(feature):
        raise ApiError("feature_not_enabled", message)


@bp.get("/tasks/<task_uid:str>/documents", ctx_action="tasks.get")
async def get_task_documents(request: Request, task_uid: str) -> HTTPResponse:
    """The documents an enqueued or processing addition carries, as the reference shows them
    (``gateway/task_documents.py``)."""
    _require_feature(request, "getTaskDocumentsRoute", _TASK_DOCUMENTS_OFF)
    query = with_visibility(request, {"uid": _uid_path(task_uid, "invalid_task_uids", "Task")})
    stored = await request.app.ctx.cluster.ask_scheduler("GetTaskDocuments", query)
    body = task_documents(stored["payload"], stored["format"])
    return raw(body, content_type="application/x-ndjson")


@bp.post("/tasks/compact", ctx_action="tasks.compact")
async def compact_task_queue(request: Request) -> HTTPResponse:
    """The task store compacted and swapped in while the cluster keeps running: unlike the reference,
    no restart is needed afterwards, so ``actionRequired`` is null and ``/health`` stays available."""
    _require_feature(request, "taskQueueCompactionRoute", _COMPACTION_OFF)
    done = await request.app.ctx.cluster.ask_scheduler("CompactTaskQueue", {})
    if "errorMessage" in done:
        return json_response({"status": "failed", "errorMessage": done["errorMessage"]}, status=500)
    return json_response(
        {
            "preSize": _human_size(done["preSize"]),
            "postSize": _human_size(done["postSize"]),
            "status": "succeeded",
            "actionRequired": None,
        }
    )


def _human_size(size: int) -> str:
    """``276 KiB``, ``1.5 MiB``: binary units, at most two decimals, as the reference prints sizes."""
    amount, unit = float(size), 0
    while amount >= 1024 and unit < len(_SIZE_UNITS) - 1:
        amount, unit = amount / 1024, unit + 1
    return f"{amount:.2f}".rstrip("0").rstrip(".") + f" {_SIZE_UNITS[unit]}"


@bp.get("/batches", ctx_action="tasks.get")
async def list_batches(request: Request) -> HTTPResponse:
    query = with_visibility(request, _scheduler_filters(parse_query(request, _LIST_QUERY)))
    return json_response(await request.app.ctx.cluster.ask_scheduler("ListBatches", query))


@bp.get("/batches/<batch_uid:str>", ctx_action="tasks.get")
async def get_batch(request: Request, batch_uid: str) -> HTTPResponse:
    uid = _uid_path(batch_uid, "invalid_batch_uids", "Batch")
    query = with_visibility(request, {"uid": uid})
    return json_response(await request.app.ctx.cluster.ask_scheduler("GetBatch", query))
