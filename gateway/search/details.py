"""The optional tail of search responses: ``metadata`` (header ``Meili-Include-Metadata``, core.md
§1.11) and ``performanceDetails`` (``showPerformanceDetails``, search.md §1.4, §2.3).

Both exist only when asked for: without them a search builds no ``Steps`` and asks nothing of the
scheduler. With the header, each index's primary key is read from the scheduler's catalog (shards do
not know it), concurrently with the search itself.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

from sanic import Request, Sanic

from common.timing import Steps
from gateway.search.response import uuid7

T = TypeVar("T")

PrimaryKeys = asyncio.Future[dict[str, str | None]]
"""Each index uid's primary key (None when it has none yet), being looked up."""


def wants_metadata(request: Request) -> bool:
    """Exactly ``true`` or ``1`` asks for metadata; any other value, like no header, does not."""
    return request.headers.get("meili-include-metadata") in ("true", "1")


def lookup_primary_keys(app: Sanic, uids: Iterable[str]) -> PrimaryKeys:
    """Started now, awaited when the response is built; it never fails (a search on a missing index
    fails on its own, with the contract's error)."""
    return asyncio.ensure_future(_primary_keys(app.ctx.cluster, list(dict.fromkeys(uids))))


async def _primary_keys(cluster: Any, uids: list[str]) -> dict[str, str | None]:
    indexes = await asyncio.gather(
        *(cluster.ask_scheduler("GetIndex", {"uid": uid}) for uid in uids), return_exceptions=True
    )
    return {
        uid: index.get("primaryKey") if isinstance(index, dict) else None
        for uid, index in zip(uids, indexes, strict=True)
    }


def query_metadata(index_uid: str, primary_key: str | None, query: str | None = None) -> dict[str, Any]:
    """``{query?, queryUid, indexUid, primaryKey?}``: ``query`` only for a federated query that is not
    a placeholder; ``primaryKey`` omitted while the index has none."""
    metadata: dict[str, Any] = {}
    if query is not None and query.strip():
        metadata["query"] = query
    metadata["queryUid"] = uuid7()
    metadata["indexUid"] = index_uid
    if primary_key is not None:
        metadata["primaryKey"] = primary_key
    return metadata


def permitted(steps: Steps | None) -> Steps | None:
    """Called once the search slot is held: ends ``wait for permit``; the search's own steps follow
    under ``search``."""
    if steps is None:
        return None
    steps.lap("wait for permit")
    return steps.child("search")


async def timed_step(steps: Steps | None, name: str, awaitable: Awaitable[T]) -> T:
    """``awaitable``'s own duration as the step ``name`` (for parts running concurrently)."""
    begin = time.perf_counter_ns()
    result = await awaitable
    if steps is not None:
        steps.add(name, time.perf_counter_ns() - begin)
    return result


def add_details(body: dict[str, Any], metadata: Any, steps: Steps | None) -> dict[str, Any]:
    """``metadata`` then ``performanceDetails`` after ``requestUid``; ``search`` is the whole time since
    the permit."""
    if metadata is not None:
        body["metadata"] = metadata
    if steps is not None:
        steps.lap("search")
        body["performanceDetails"] = steps.details()
    return body
