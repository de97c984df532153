"""``GET /stats`` and ``GET /indexes/{uid}/stats`` (core.md §3.1, §3.2): summed over every shard."""

from __future__ import annotations

from collections.abc import Iterable
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
        "sizeFormat": Param(QueryKind.STRING, code="invalid_stats_size_format", choices=("human", "raw")),
    }
)
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _size(value: int, human: bool) -> int | str:
    """``human``: binary units with at most two decimals, as the reference writes them (``93 B``,
    ``4 KiB``, ``3.26 KiB``, ``16.55 MiB``)."""
    if not human:
        return value
    amount, unit = float(value), 0
    while amount >= 1024 and unit < len(_UNITS) - 1:
        amount, unit = amount / 1024, unit + 1
    figure = f"{amount:.2f}".rstrip("0").rstrip(".")
    return f"{figure} {_UNITS[unit]}"


async def _index_stats(
    request: Request, uid: str, is_indexing: bool, human: bool, internal: bool
) -> dict[str, Any]:
    """Summed over the shards, in the contract's field order (core.md §3.2, IndexStats)."""
    query = {"index": uid, "showInternalDatabaseSizes": internal}
    replies = await request.app.ctx.cluster.ask_shards("Stats", query)
    documents = sum(r["numberOfDocuments"] for r in replies)
    raw_size = sum(r["rawDocumentDbSize"] for r in replies)
    stats: dict[str, Any] = {
        "numberOfDocuments": documents,
        "rawDocumentDbSize": _size(raw_size, human),
        "avgDocumentSize": _size(raw_size // documents if documents else 0, human),
        "isIndexing": is_indexing,
    }
    tables = _summed(reply.get("internalDatabaseSizes", {}) for reply in replies)
    if internal and any(tables.values()):
        # largest first, empty tables left out, as the reference lists its databases
        ordered = sorted((item for item in tables.items() if item[1]), key=lambda item: -item[1])
        stats["internalDatabaseSizes"] = {name: _size(size, human) for name, size in ordered}
    stats["numberOfEmbeddings"] = sum(r.get("numberOfEmbeddings", 0) for r in replies)
    stats["numberOfEmbeddedDocuments"] = sum(r.get("numberOfEmbeddedDocuments", 0) for r in replies)
    stats["fieldDistribution"] = dict(sorted(_summed(r["fieldDistribution"] for r in replies).items()))
    return stats


def _summed(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for shard_counts in counts:
        for name, count in shard_counts.items():
            total[name] = total.get(name, 0) + count
    return total


@bp.get("/indexes/<index_uid:str>/stats", ctx_action="stats.get")
async def index_stats(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    query = parse_query(request, _QUERY)
    human = query.get("sizeFormat") == "human"
    await request.app.ctx.cluster.ask_scheduler("GetIndex", {"uid": uid})
    scheduler = await request.app.ctx.cluster.ask_scheduler("Stats", {})
    is_indexing = scheduler["indexes"].get(uid, {}).get("isIndexing", False)
    internal = bool(query.get("showInternalDatabaseSizes"))
    return json_response(await _index_stats(request, uid, is_indexing, human, internal))


@bp.get("/stats", ctx_action="stats.get")
async def global_stats(request: Request) -> HTTPResponse:
    """Sizes are the data files of the scheduler and every shard (core.md §3.1)."""
    query = parse_query(request, _QUERY)
    human = query.get("sizeFormat") == "human"
    internal = bool(query.get("showInternalDatabaseSizes"))
    cluster = request.app.ctx.cluster
    scheduler = await cluster.ask_scheduler("Stats", {})
    environments = [scheduler, *await cluster.ask_shards("Stats", {})]
    access = access_of(request)
    # Sizes count every index; the per-index figures and lastUpdate only those the key may see.
    visible = {uid: info for uid, info in scheduler["indexes"].items() if access.allows(uid)}
    indexes = {
        uid: await _index_stats(request, uid, info["isIndexing"], human, internal)
        for uid, info in sorted(visible.items())
    }
    updates = [info["updatedAt"] for info in visible.values()]
    return json_response(
        {
            "databaseSize": _size(sum(e["databaseSize"] for e in environments), human),
            "usedDatabaseSize": _size(sum(e["usedDatabaseSize"] for e in environments), human),
            "lastUpdate": max(updates) if updates else None,
            "indexes": indexes,
        }
    )
