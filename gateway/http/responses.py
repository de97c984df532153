"""Response builders: JSON encoded with orjson (the gateway's hottest serialisation path)."""

from __future__ import annotations

from typing import Any

import orjson
from sanic import HTTPResponse
from sanic.response import raw


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> HTTPResponse:
    return raw(orjson.dumps(value), status=status, content_type="application/json", headers=headers)


def empty_response(status: int, headers: dict[str, str] | None = None) -> HTTPResponse:
    """A bodiless response; an explicit type stops Sanic from sending ``content-type: None``."""
    return HTTPResponse(b"", status=status, headers=headers, content_type="text/plain; charset=utf-8")
