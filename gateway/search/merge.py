"""Merging the shards' hits into one page, and the response shape of search.md §1.4."""

from __future__ import annotations

import math
import os
import time
import uuid
from typing import Any

import orjson

from common.rpc import shard_pb2
from gateway.pages import merge_shard_pages


def merge_hits(replies: list[shard_pb2.SearchReply], offset: int, limit: int) -> list[dict[str, Any]]:
    """Each shard returns its best ``offset + limit`` hits as ``[internal id, hit]`` in order."""
    return merge_shard_pages([orjson.loads(reply.hits_json) for reply in replies], offset, limit)


def response(
    hits: list[dict[str, Any]],
    query: str | None,
    started: float,
    window: tuple[int, int, bool],
    params: dict[str, Any],
    total: int,
) -> dict[str, Any]:
    offset, limit, page_mode = window
    body: dict[str, Any] = {
        "hits": hits,
        "query": query or "",
        "processingTimeMs": int((time.perf_counter() - started) * 1000),
    }
    if page_mode:
        per_page = limit
        body["hitsPerPage"] = per_page
        body["page"] = 1 if params.get("page") is None else params["page"]
        body["totalPages"] = math.ceil(total / per_page) if per_page else 0
        body["totalHits"] = total
    else:
        body["limit"] = limit
        body["offset"] = offset
        body["estimatedTotalHits"] = total
    body["requestUid"] = uuid7()
    return body


def uuid7() -> str:
    """A version-7 UUID (time-ordered), as the reference stamps each search request."""
    millis = time.time_ns() // 1_000_000
    value = (millis & ((1 << 48) - 1)) << 80 | int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)
    value = (value & ~(0x3 << 62)) | (0x2 << 62)
    return str(uuid.UUID(int=value))
