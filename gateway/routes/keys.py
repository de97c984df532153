"""``/keys`` and ``/keys/{uidOrKey}`` (core.md §3.6): validated here, stored by the scheduler.

Reads are answered from the gateway's key ring, which holds every key; each change is committed by
the scheduler first and then applied to the ring, so the ring never shows an unacknowledged key.
"""

from __future__ import annotations

import uuid
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

import grpc
from sanic import Blueprint, HTTPResponse, Request

from common.errors import ApiError, api_key_not_found
from common.index_patterns import IndexPatterns, is_valid_pattern
from common.timefmt import now_ns, parse_rfc3339
from common.validation import Kind, Param, QueryKind, QuerySchema, Schema, Spec
from gateway.auth.actions import ACTIONS, GLOBAL_ONLY
from gateway.auth.keyring import ApiKey, KeyRing, canonical_uid
from gateway.http.requests import json_body, parse_query
from gateway.http.responses import empty_response, json_response

bp = Blueprint("keys")

_NAIVE_FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d")


def parse_expiration(text: str) -> int | None:
    """``expiresAt`` in ns: RFC 3339, or a UTC date or date-time without offset; None if unreadable."""
    with suppress(ValueError):
        return parse_rfc3339(text)
    for fmt in _NAIVE_FORMATS:
        with suppress(ValueError):
            moment = datetime.strptime(text, fmt).replace(tzinfo=UTC)
            return int(moment.timestamp()) * 1_000_000_000
    return None


def _expiration_check(text: str) -> str | None:
    expires = parse_expiration(text)
    if expires is not None and expires > now_ns():
        return None
    return (
        f"`{text}` is not a valid date. It should follow the RFC 3339 format to represents a date or datetime"
        " in the future or specified as a null value. e.g. 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'.\n"
    )


def _pattern_check(pattern: str) -> str | None:
    if is_valid_pattern(pattern):
        return None
    return (
        f"`{pattern}` is not a valid index uid pattern. Index uid patterns can be an integer or a string"
        " containing only alphanumeric characters, hyphens (-), underscores (_), and optionally end with a"
        " star (*)."
    )


def _uid_check(text: str) -> str | None:
    if canonical_uid(text) is not None:
        return None
    return f"invalid UUID `{text}`: expected 32 hexadecimal digits, optionally hyphenated as 8-4-4-4-12"


_NAME = Spec(Kind.STRING, nullable=True, code="invalid_api_key_name")
_DESCRIPTION = Spec(Kind.STRING, nullable=True, code="invalid_api_key_description")


def _required(kinds: Kind, field: str, **spec: Any) -> Spec:
    """A required field with its ``invalid_api_key_*`` and ``missing_api_key_*`` codes."""
    code, missing = f"invalid_api_key_{field}", f"missing_api_key_{field}"
    return Spec(kinds, required=True, code=code, missing_code=missing, **spec)


_CREATE = Schema(
    {
        "description": _DESCRIPTION,
        "name": _NAME,
        "uid": Spec(Kind.STRING, code="invalid_api_key_uid", check=_uid_check),
        "actions": _required(Kind.ARRAY, "actions", items=Spec(Kind.STRING, choices=ACTIONS)),
        "indexes": _required(Kind.ARRAY, "indexes", items=Spec(Kind.STRING, check=_pattern_check)),
        "expiresAt": _required(Kind.STRING, "expires_at", nullable=True, check=_expiration_check),
    }
)
_UPDATE = Schema(
    {"description": _DESCRIPTION, "name": _NAME},
    immutable={
        "uid": "immutable_api_key_uid",
        "actions": "immutable_api_key_actions",
        "indexes": "immutable_api_key_indexes",
        "expiresAt": "immutable_api_key_expires_at",
        "createdAt": "immutable_api_key_created_at",
        "updatedAt": "immutable_api_key_updated_at",
    },
)
_LIST_QUERY = QuerySchema(
    {
        "offset": Param(QueryKind.POSITIVE_INTEGER, code="invalid_api_key_offset"),
        "limit": Param(QueryKind.POSITIVE_INTEGER, code="invalid_api_key_limit"),
    }
)


def _keys(request: Request) -> KeyRing:
    keys: KeyRing = request.app.ctx.keys
    return keys


def _resolve(request: Request, uid_or_key: str) -> ApiKey:
    key = _keys(request).resolve(uid_or_key)
    if key is None:
        raise api_key_not_found(uid_or_key)
    return key


async def _change(request: Request, method: str, payload: dict[str, Any]) -> dict[str, Any]:
    """One key rpc. If its reply is lost, the change may still have been committed: the ring is
    reloaded so that it matches the store again."""
    cluster = request.app.ctx.cluster
    try:
        record: dict[str, Any] = await cluster.ask_scheduler(method, payload)
    except grpc.aio.AioRpcError:
        with suppress(grpc.aio.AioRpcError):
            _keys(request).replace_all((await cluster.ask_scheduler("ListKeys", {}))["results"])
        raise
    return record


@bp.get("/keys", ctx_action="keys.get")
async def list_keys(request: Request) -> HTTPResponse:
    query = parse_query(request, _LIST_QUERY)
    offset, limit = query.get("offset", 0), query.get("limit", 20)
    keys = _keys(request).newest_first()
    results = [key.public() for key in keys[offset : offset + limit]]
    return json_response({"results": results, "offset": offset, "limit": limit, "total": len(keys)})


@bp.post("/keys", ctx_action="keys.create")
async def create_key(request: Request) -> HTTPResponse:
    body = _CREATE.validate(json_body(request))
    indexes: list[str] = body["indexes"]
    if indexes and not IndexPatterns(indexes).all:
        for action in body["actions"]:
            if action in GLOBAL_ONLY:
                raise ApiError(
                    "index_scoped_api_key_with_global_action",
                    f'cannot create index-scoped API key with global action `"{action}"`\n'
                    ' - Hint: keys with global actions must have `indexes` set to `["*"]`',
                )
    expires = body["expiresAt"]
    record = {
        "uid": canonical_uid(body["uid"]) if "uid" in body else str(uuid.uuid4()),
        "name": body.get("name"),
        "description": body.get("description"),
        "actions": body["actions"],
        "indexes": indexes,
        "expiresNs": None if expires is None else parse_expiration(expires),
    }
    created = _keys(request).put(await _change(request, "CreateKey", record))
    return json_response(created.public(), status=201)


@bp.get("/keys/<uid_or_key:str>", ctx_action="keys.get")
async def get_key(request: Request, uid_or_key: str) -> HTTPResponse:
    return json_response(_resolve(request, uid_or_key).public())


@bp.patch("/keys/<uid_or_key:str>", ctx_action="keys.update")
async def update_key(request: Request, uid_or_key: str) -> HTTPResponse:
    changes = _UPDATE.validate(json_body(request))
    key = _resolve(request, uid_or_key)
    updated = _keys(request).put(await _change(request, "UpdateKey", {**changes, "uid": key.uid}))
    return json_response(updated.public())


@bp.delete("/keys/<uid_or_key:str>", ctx_action="keys.delete")
async def delete_key(request: Request, uid_or_key: str) -> HTTPResponse:
    key = _resolve(request, uid_or_key)
    await _change(request, "DeleteKey", {"uid": key.uid})
    _keys(request).remove(key.uid)
    return empty_response(status=204)
