"""``POST /indexes/{uid}/facet-search`` (search.md §3.1): a facet's values matching a query, counted
within a search's candidates.

The search part runs on the shards like a search asking for no hits; each shard matches and counts the
facet's values over its candidates, and the gateway sums them (``gateway/search/facets.py``). A
semantic or hybrid one counts over every document its filter keeps.
"""

from __future__ import annotations

import time
from typing import Any

from sanic import Blueprint, HTTPResponse, Request

from common.facets import check_facet_search
from common.validation import Kind, Schema, Spec
from gateway.auth.requests import access_of
from gateway.http.requests import checked_index_uid, json_body
from gateway.http.responses import json_response
from gateway.search.facets import facet_hits
from gateway.search.hybrid import keyword_params, semantic_kind
from gateway.search.params import BODY, select_search_kind
from gateway.search.queue import search_slot
from gateway.search.response import processing_ms
from gateway.search.runner import search_index

bp = Blueprint("facet_search")

_SEARCH_PARAMS = (
    "q",
    "filter",
    "matchingStrategy",
    "attributesToSearchOn",
    "rankingScoreThreshold",
    "locales",
    "hybrid",
    "vector",
    "media",
    "useNetwork",
)

# Unknown fields are ignored, so that a whole search body can be reused.
FACET_SEARCH = Schema(
    {
        "facetName": Spec(
            Kind.STRING,
            required=True,
            code="invalid_facet_search_facet_name",
            missing_code="missing_facet_search_facet_name",
        ),
        "facetQuery": Spec(Kind.STRING, nullable=True, code="invalid_facet_search_query"),
        "exhaustiveFacetCount": Spec(
            Kind.BOOLEAN, nullable=True, code="invalid_facet_search_exhaustive_facet_count"
        ),
        **{name: BODY.fields[name] for name in _SEARCH_PARAMS},
    },
    ignore_unknown=True,
)


@bp.post("/indexes/<index_uid:str>/facet-search", ctx_action="search")
async def facet_search(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    fields = FACET_SEARCH.validate(json_body(request))
    params: dict[str, Any] = {name: fields[name] for name in _SEARCH_PARAMS if name in fields}
    params = access_of(request).restrict_search(uid, params)
    params = select_search_kind(params)
    if semantic_kind(params):
        # search.md §3.1: a semantic or hybrid facet search counts in every document the filter
        # keeps; the shards check the embedder and the vector's dimensions, nothing is embedded.
        check = {"embedder": params["hybrid"]["embedder"], "vector": params.get("vector")}
        params = {**keyword_params(params), "q": None, "embedderCheck": check}
        params.pop("rankingScoreThreshold", None)
    query = fields.get("facetQuery")
    params["facetSearch"] = {"facetName": fields["facetName"], "facetQuery": query}
    async with search_slot(request.app):
        started = time.perf_counter()
        result = await search_index(request.app, uid, params, 0)
    if not result.facets:
        # No shard holds the index yet: its settings are the defaults.
        check_facet_search(fields["facetName"], {})
    body = {
        "facetHits": facet_hits(result.facets),
        "facetQuery": query,
        "processingTimeMs": processing_ms(started, result.transit_ns),
    }
    return json_response(body)
