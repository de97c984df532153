"""``/indexes``, ``/indexes/{uid}``, ``/indexes/{uid}/compact`` and ``/swap-indexes`` (core.md §3.2, §3.10,
§3.15)."""

from __future__ import annotations

from typing import Any

from sanic import Blueprint, HTTPResponse, Request

from common.errors import ApiError, invalid_index_uid
from common.validation import Kind, Param, QueryKind, QuerySchema, Schema, Spec, validate
from gateway.auth.requests import require_indexes, with_visibility
from gateway.http.requests import checked_index_uid, is_valid_index_uid, json_body, parse_query
from gateway.http.responses import json_response

bp = Blueprint("indexes")

_LIST_QUERY = QuerySchema(
    {
        "offset": Param(QueryKind.POSITIVE_INTEGER, code="invalid_index_offset"),
        "limit": Param(QueryKind.POSITIVE_INTEGER, code="invalid_index_limit"),
    }
)


def _uid_check(uid: str) -> str | None:
    return None if is_valid_index_uid(uid) else invalid_index_uid(uid).message


_CREATE = Schema(
    {
        "uid": Spec(
            Kind.STRING,
            code="invalid_index_uid",
            required=True,
            missing_code="missing_index_uid",
            check=_uid_check,
        ),
        "primaryKey": Spec(Kind.STRING, nullable=True, code="invalid_index_primary_key"),
    }
)
_UPDATE = Schema(
    {
        "primaryKey": Spec(Kind.STRING, nullable=True, code="invalid_index_primary_key"),
        "uid": Spec(Kind.STRING, code="invalid_index_uid", check=_uid_check),
    },
    immutable={"createdAt": "immutable_index_created_at", "updatedAt": "immutable_index_updated_at"},
)
_SWAP = Spec(
    Kind.ARRAY,
    code="bad_request",
    items=Spec(
        Kind.OBJECT,
        code="bad_request",
        schema=Schema(
            {
                "indexes": Spec(
                    Kind.ARRAY,
                    code="invalid_swap_indexes",
                    required=True,
                    missing_code="missing_swap_indexes",
                    items=Spec(Kind.STRING, code="invalid_swap_indexes", check=_uid_check),
                ),
                "rename": Spec(Kind.BOOLEAN, code="invalid_swap_rename"),
            }
        ),
    ),
)


@bp.get("/indexes", ctx_action="indexes.get")
async def list_indexes(request: Request) -> HTTPResponse:
    query = parse_query(request, _LIST_QUERY)
    page = {"offset": query.get("offset", 0), "limit": query.get("limit", 20)}
    return json_response(
        await request.app.ctx.cluster.ask_scheduler("ListIndexes", with_visibility(request, page))
    )


@bp.post("/indexes", ctx_action="indexes.create")
async def create_index(request: Request) -> HTTPResponse:
    body = _CREATE.validate(json_body(request))
    require_indexes(request, [body["uid"]])
    details = {"primaryKey": body.get("primaryKey")}
    task = await request.app.ctx.cluster.register_task(
        "indexCreation", body["uid"], {"primaryKey": body.get("primaryKey"), "details": details}
    )
    return json_response(task, status=202)


@bp.get("/indexes/<index_uid:str>", ctx_action="indexes.get")
async def get_index(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    return json_response(await request.app.ctx.cluster.ask_scheduler("GetIndex", {"uid": uid}))


@bp.patch("/indexes/<index_uid:str>", ctx_action="indexes.update")
async def update_index(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    body = _UPDATE.validate(json_body(request))
    details: dict[str, Any] = {"primaryKey": body.get("primaryKey")}
    params: dict[str, Any] = {"primaryKey": body.get("primaryKey")}
    if "uid" in body and body["uid"] != uid:
        details.update({"oldIndexUid": uid, "newIndexUid": body["uid"]})
        params["newUid"] = body["uid"]
    task = await request.app.ctx.cluster.register_task("indexUpdate", uid, {**params, "details": details})
    return json_response(task, status=202)


@bp.delete("/indexes/<index_uid:str>", ctx_action="indexes.delete")
async def delete_index(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    params = {"details": {"deletedDocuments": None}}
    return json_response(
        await request.app.ctx.cluster.register_task("indexDeletion", uid, params), status=202
    )


@bp.post("/indexes/<index_uid:str>/compact", ctx_action="indexes.compact")
async def compact_index(request: Request, index_uid: str) -> HTTPResponse:
    """Enqueued whether or not the index exists (the task then fails with ``index_not_found``); the body
    and query string are ignored, as the reference engine does. Details appear once it succeeded."""
    uid = checked_index_uid(index_uid)
    task = await request.app.ctx.cluster.register_task("indexCompaction", uid, {"details": {}})
    return json_response(task, status=202)


@bp.post("/swap-indexes", ctx_action="indexes.swap")
async def swap_indexes(request: Request) -> HTTPResponse:
    swaps = validate(_SWAP, json_body(request))
    seen: list[str] = []
    duplicates: list[str] = []
    for position, swap in enumerate(swaps):
        indexes = swap["indexes"]
        if len(indexes) != 2:
            raise ApiError(
                "invalid_swap_indexes",
                f"Two indexes must be given for each swap. The list `{_rust_list(indexes)}` contains "
                f"{len(indexes)} indexes.",
            )
        for uid in indexes:
            if uid in seen and uid not in duplicates:
                duplicates.append(uid)
            seen.append(uid)
        swaps[position] = {"indexes": indexes, "rename": swap.get("rename", False)}
    require_indexes(request, seen)
    if duplicates:
        names = ", ".join(f"`{d}`" for d in duplicates)
        verb = "was specified several times" if len(duplicates) == 1 else "were specified several times"
        raise ApiError(
            "invalid_swap_duplicate_index_found",
            f"Indexes must be declared only once during a swap. {names} {verb}.",
        )
    params = {"swaps": swaps, "details": {"swaps": swaps}}
    return json_response(await request.app.ctx.cluster.register_task("indexSwap", None, params), status=202)


def _rust_list(values: list[str]) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"
