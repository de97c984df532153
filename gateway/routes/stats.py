"""``GET /stats`` and ``GET /indexes/{uid}/stats`` (core.md §3.1, §3.2): summed over every shard."""

from __future__ import annotations

from typing import Any

from sanic import Blueprint, HTTPResponse, Request

from common.validation import Param, QueryKind, QuerySchema
from gateway.auth.requests import access_of
from gateway.http.requests import checked_index_uid, parse_query
from gateway.http.responses import json_response

bp = Blueprint("stats")

_QUERY = QuerySchema(
    {
        "showInternalDatabaseSizes": Param(
            QueryKind.BOOLEAN, code="invalid_stats_show_internal_database_sizes"
        ),
        "sizeFormat": Param(QueryKind.STRING, code="invalid_stats_size_format", choices=("raw", "human")),
    }
)
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _size(value: int, human: bool) -> int | str:
    if not human:
        return value
    amount, unit = float(value), 0
    while amount >= 1024 and unit < len(_UNITS) - 1:
        amount, unit = amount / 1024, unit + 1
    return f"{amount:.2f} {_UNITS[unit]}"


async def _index_stats(request: Request, uid: str, is_indexing: bool, human: bool) -> dict[str, Any]:
    replies = await request.app.ctx.cluster.ask_shards("Stats", {"index": uid})
    documents = sum(r["numberOfDocuments"] for r in replies)
    raw_size = sum(r["rawDocumentDbSize"] for r in replies)
    distribution: dict[str, int] = {}
    for reply in replies:
        for field, count in reply["fieldDistribution"].items():
            distribution[field] = distribution.get(field, 0) + count
    return {
        "numberOfDocuments": documents,
        "rawDocumentDbSize": _size(raw_size, human),
        "avgDocumentSize": _size(raw_size // documents if documents else 0, human),
        "isIndexing": is_indexing,
        "fieldDistribution": dict(sorted(distribution.items())),
    }


@bp.get("/indexes/<index_uid:str>/stats", ctx_action="stats.get")
async def index_stats(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    human = parse_query(request, _QUERY).get("sizeFormat") == "human"
    await request.app.ctx.cluster.ask_scheduler("GetIndex", {"uid": uid})
    scheduler = await request.app.ctx.cluster.ask_scheduler("Stats", {})
    is_indexing = scheduler["indexes"].get(uid, {}).get("isIndexing", False)
    return json_response(await _index_stats(request, uid, is_indexing, human))


@bp.get("/stats", ctx_action="stats.get")
async def global_stats(request: Request) -> HTTPResponse:
    human = parse_query(request, _QUERY).get("sizeFormat") == "human"
    cluster = request.app.ctx.cluster
    scheduler = await cluster.ask_scheduler("Stats", {})
    shard_sizes = await cluster.ask_shards("Stats", {})
    total = scheduler["databaseSize"] + sum(s["databaseSize"] for s in shard_sizes)
    access = access_of(request)
    # Sizes count every index; the per-index figures and lastUpdate only those the key may see.
    visible = {uid: info for uid, info in scheduler["indexes"].items() if access.allows(uid)}
    indexes = {
        uid: await _index_stats(request, uid, info["isIndexing"], human)
        for uid, info in sorted(visible.items())
    }
    updates = [info["updatedAt"] for info in visible.values()]
    return json_response(
        {
            "databaseSize": _size(total, human),
            "usedDatabaseSize": _size(total, human),
            "lastUpdate": max(updates) if updates else None,
            "indexes": indexes,
        }
    )
