"""``/indexes/{uid}/similar`` GET and POST (search.md §3.2): the documents nearest to one document.

The shard holding the target gives its first embedding for the embedder (``DocumentVector``); a
tenant token's filter must keep the target, or it is not found. Every shard then ranks its documents
by similarity to it, the target left out, as a semantic search without keyword, sort nor distinct
(``shard/query/semantic.py``): documents without an embedding are never hits but are counted, as
the reference counts them.
"""

from __future__ import annotations

import time
from typing import Any

from sanic import Blueprint, HTTPResponse, Request

from common.documents.primary_key import invalid_document_id_error, is_valid_document_id
from common.errors import ApiError
from common.settings.pagination import capped_window
from common.timing import Steps, timed
from common.validation import Kind, Param, QueryKind, QuerySchema, Schema, Spec
from gateway.auth.requests import access_of
from gateway.http.requests import checked_index_uid, json_body, parse_query
from gateway.http.responses import json_response
from gateway.search.details import add_details, permitted
from gateway.search.params import DEFAULT_LIMIT, query_filter, query_ratio
from gateway.search.queue import search_slot
from gateway.search.response import processing_ms
from gateway.search.runner import IndexSearch, render_hit, search_index

bp = Blueprint("similar")

_THRESHOLD_PROBLEM = (
    "the value of `rankingScoreThreshold` is invalid, expected a float between `0.0` and `1.0`."
)


def _threshold(value: float) -> str | None:
    return None if 0.0 <= value <= 1.0 else _THRESHOLD_PROBLEM


BODY = Schema(
    {
        "id": Spec(Kind.ANY, required=True, code="invalid_similar_id", missing_code="bad_request"),
        "offset": Spec(Kind.POSITIVE_INTEGER, code="invalid_similar_offset"),
        "limit": Spec(Kind.POSITIVE_INTEGER, code="invalid_similar_limit"),
        "filter": Spec(Kind.STRING | Kind.ARRAY, nullable=True, code="invalid_similar_filter"),
        "embedder": Spec(
            Kind.STRING, required=True, code="invalid_similar_embedder", missing_code="bad_request"
        ),
        "attributesToRetrieve": Spec(
            Kind.ARRAY, nullable=True, code="invalid_similar_attributes_to_retrieve", items=Spec(Kind.STRING)
        ),
        "retrieveVectors": Spec(Kind.BOOLEAN, code="invalid_similar_retrieve_vectors"),
        "showRankingScore": Spec(Kind.BOOLEAN, code="invalid_similar_show_ranking_score"),
        "showRankingScoreDetails": Spec(Kind.BOOLEAN, code="invalid_similar_show_ranking_score_details"),
        "showPerformanceDetails": Spec(Kind.BOOLEAN, code="invalid_similar_show_performance_details"),
        "rankingScoreThreshold": Spec(
            Kind.NUMBER, nullable=True, code="invalid_similar_ranking_score_threshold", check=_threshold
        ),
    }
)

QUERY = QuerySchema(
    {
        "id": Param(QueryKind.STRING, code="invalid_similar_id", required=True),
        "embedder": Param(QueryKind.STRING, code="invalid_similar_embedder", required=True),
        "offset": Param(QueryKind.POSITIVE_INTEGER, code="invalid_similar_offset"),
        "limit": Param(QueryKind.POSITIVE_INTEGER, code="invalid_similar_limit"),
        "attributesToRetrieve": Param(QueryKind.STRING_LIST, code="invalid_similar_attributes_to_retrieve"),
        "retrieveVectors": Param(QueryKind.BOOLEAN, code="invalid_similar_retrieve_vectors"),
        "filter": Param(QueryKind.STRING, code="invalid_similar_filter"),
        "showRankingScore": Param(QueryKind.BOOLEAN, code="invalid_similar_show_ranking_score"),
        "showRankingScoreDetails": Param(
            QueryKind.BOOLEAN, code="invalid_similar_show_ranking_score_details"
        ),
        "showPerformanceDetails": Param(QueryKind.BOOLEAN, code="invalid_similar_show_performance_details"),
        "rankingScoreThreshold": Param(QueryKind.STRING, code="invalid_similar_ranking_score_threshold"),
    }
)


@bp.post("/indexes/<index_uid:str>/similar", ctx_action="search")
async def similar_with_post(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    params = BODY.validate(json_body(request))
    return await _similar(request, uid, params)


@bp.get("/indexes/<index_uid:str>/similar", ctx_action="search")
async def similar_with_get(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    params = parse_query(request, QUERY)
    if "filter" in params:
        params["filter"] = query_filter(params["filter"])
    threshold = params.pop("rankingScoreThreshold", None)
    if threshold is not None:
        code = "invalid_similar_ranking_score_threshold"
        params["rankingScoreThreshold"] = query_ratio(threshold, "rankingScoreThreshold", code)
    return await _similar(request, uid, params)


def target_id(value: Any) -> str:
    """The target's external id: an integer's decimal text or a valid id string."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value)
    if isinstance(value, str) and is_valid_document_id(value):
        return value
    raise ApiError(
        "invalid_similar_id", f"Invalid value at `.id`: {invalid_document_id_error(value).message}"
    )


async def _similar(request: Request, uid: str, params: dict[str, Any]) -> HTTPResponse:
    target = target_id(params["id"])
    access = access_of(request)
    tenant_filter = access.restrict_search(uid, {}).get("filter")
    params = access.restrict_search(uid, params)
    steps = timed(params.get("showPerformanceDetails"))
    async with search_slot(request.app):
        started = time.perf_counter()
        search_steps = permitted(steps)
        result = await similar_documents(request, uid, target, params, tenant_filter, search_steps)
        offset, limit = params.get("offset", 0), params.get("limit", DEFAULT_LIMIT)
        first, count = capped_window(offset, limit, result.max_total_hits)
        body: dict[str, Any] = {
            "hits": [render_hit(hit, params) for hit in result.hits[first : first + count]],
            "id": target,
            "processingTimeMs": processing_ms(started, result.transit_ns),
            "offset": offset,
            "limit": limit,
            "estimatedTotalHits": min(result.candidates, result.max_total_hits),
        }
        if search_steps is not None:
            search_steps.lap("format")
        return json_response(add_details(body, None, steps))


async def similar_documents(
    request: Request,
    uid: str,
    target: str,
    params: dict[str, Any],
    tenant_filter: Any,
    steps: Steps | None,
) -> IndexSearch:
    """The target's neighbours among the documents the filter keeps (the page's worth, from 0)."""
    app = request.app
    embedder = params["embedder"]
    features = app.ctx.features.filters().params()
    ask = {"index": uid, "embedder": embedder, "id": target, "filter": tenant_filter, **features}
    reply = await app.ctx.cluster.ask_shard(target, "DocumentVector", ask)
    if not reply["indexFound"]:
        # The shard holding the target never held the index: it has no settings, so no embedder.
        await app.ctx.cluster.ask_scheduler("GetIndex", {"uid": uid})
        raise ApiError("invalid_similar_embedder", f"Cannot find embedder with name `{embedder}`.")
    query: dict[str, Any] = {
        name: params[name]
        for name in ("filter", "attributesToRetrieve", "retrieveVectors", "rankingScoreThreshold")
        if params.get(name) is not None
    }
    query["similarTo"] = target
    if reply["vector"] is not None:
        query["vector"] = reply["vector"]
        query["hybrid"] = {"embedder": embedder, "semanticRatio": 1.0}
    wanted = params.get("offset", 0) + params.get("limit", DEFAULT_LIMIT)
    # Without an embedding the target has no neighbour: only the count is asked (a placeholder).
    return await search_index(app, uid, query, wanted if "vector" in query else 0, steps)
