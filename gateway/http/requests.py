"""Reading requests the way every route needs: query strings, JSON bodies, index uids."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from sanic import Request

from common.errors import invalid_content_type, invalid_index_uid, missing_content_type
from common.index_patterns import is_valid_index_uid
from common.validation import QuerySchema, parse_json_body


def query_args(request: Request) -> dict[str, list[str]]:
    """Blank values are kept (``?limit=`` must fail to parse, not be ignored)."""
    return parse_qs(request.query_string, keep_blank_values=True)


def parse_query(request: Request, schema: QuerySchema) -> dict[str, Any]:
    return schema.validate(query_args(request))


def json_body(request: Request) -> Any:
    """The decoded JSON body of a JSON route, after the contract's content-type checks."""
    content_type = request.headers.get("content-type")
    if content_type is None:
        raise missing_content_type(["application/json"])
    media = content_type.split(";", 1)[0].strip().lower()
    subtype = media.split("/", 1)[-1]
    if "/" not in media or not (subtype == "json" or subtype.endswith("+json")):
        raise invalid_content_type(content_type, ["application/json"])
    return parse_json_body(request.body)


def checked_index_uid(uid: str) -> str:
    if not is_valid_index_uid(uid):
        raise invalid_index_uid(uid)
    return uid
