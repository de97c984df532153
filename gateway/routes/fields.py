"""``POST /indexes/{uid}/fields`` (core.md §3.15): a page of the index's fields with their capabilities.

The fields are every path the index's documents ever had (each shard keeps its own set,
``shard/index/fields.py``) plus the primary key; the flags come from the index's settings
(``common/settings/capabilities.py``). One round: the catalog, the settings and every shard at once.
"""

from __future__ import annotations

import asyncio

from sanic import Blueprint, HTTPResponse, Request

from common.settings.capabilities import FILTER_FLAGS, FieldCapabilities, keeps
from common.validation import Kind, Schema, Spec
from gateway.http.requests import checked_index_uid, json_body
from gateway.http.responses import json_response

bp = Blueprint("fields")

_FLAG_CODES = {
    "displayed": "invalid_index_fields_filter_displayed",
    "searchable": "invalid_index_fields_filter_searchable",
    "sortable": "invalid_index_fields_filter_sortable",
    "distinct": "invalid_index_fields_filter_distinct",
    "rankingRule": "invalid_index_fields_filter_ranking_rule",
    "filterable": "invalid_index_fields_filter_filterable",
}
_FILTER = Schema(
    {
        "attributePatterns": Spec(
            Kind.ARRAY,
            nullable=True,
            code="invalid_index_fields_filter_attribute_patterns",
            items=Spec(Kind.STRING),
        ),
        **{flag: Spec(Kind.BOOLEAN, nullable=True, code=_FLAG_CODES[flag]) for flag in FILTER_FLAGS},
    }
)
_BODY = Schema(
    {
        "offset": Spec(Kind.POSITIVE_INTEGER, code="invalid_index_offset"),
        "limit": Spec(Kind.POSITIVE_INTEGER, code="invalid_index_limit"),
        "filter": Spec(Kind.OBJECT, nullable=True, code="invalid_index_fields_filter", schema=_FILTER),
    }
)


@bp.post("/indexes/<index_uid:str>/fields", ctx_action="fields.post")
async def list_fields(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    body = _BODY.validate(json_body(request))
    cluster = request.app.ctx.cluster
    index, settings, replies = await asyncio.gather(
        cluster.ask_scheduler("GetIndex", {"uid": uid}),
        cluster.ask_scheduler("GetSettings", {"uid": uid}),
        cluster.ask_shards("Fields", {"index": uid}),
    )
    names = {name for reply in replies for name in reply["fields"]}
    if index["primaryKey"] is not None:
        names.add(index["primaryKey"])
    capabilities = FieldCapabilities(settings)
    criteria = body.get("filter") or {}
    entries = [capabilities.describe(name) for name in sorted(names)]
    selected = [entry for entry in entries if keeps(entry, criteria)] if criteria else entries
    offset, limit = body.get("offset", 0), body.get("limit", 20)
    page = selected[offset : offset + limit]
    return json_response({"results": page, "offset": offset, "limit": limit, "total": len(selected)})
