"""The single-search response body (search.md §1.4) from an index's merged hits."""

from __future__ import annotations

import math
import time
from typing import Any

from common.settings.pagination import capped_window
from common.uuid7 import uuid7
from gateway.search.facets import merge_facets
from gateway.search.params import DEFAULT_LIMIT
from gateway.search.runner import IndexSearch, render_hit


def search_response(
    result: IndexSearch, params: dict[str, Any], window: tuple[int, int, bool], started: float
) -> dict[str, Any]:
    """Only the hits stop at ``maxTotalHits``: the counts are the candidates summed over the shards,
    uncapped, as the reference's search pipeline reports them (search.md §1.5 left it open), so
    ``totalPages`` may point past the last reachable page."""
    offset, limit, _ = window
    first, count = capped_window(offset, limit, result.max_total_hits)
    total = result.candidates
    page = result.hits[first : first + count]
    body: dict[str, Any] = {
        "hits": [render_hit(entry, params) for entry in page],
        "query": params.get("q") or "",
    }
    if params.get("retrieveVectors") and result.query_vector is not None:
        body["queryVector"] = result.query_vector
    body["processingTimeMs"] = processing_ms(started, result.transit_ns)
    add_page_fields(body, window, params, total)
    if params.get("facets") is not None:
        facets = merge_facets(result.facets, result.candidates, params["facets"])
        body["facetDistribution"], body["facetStats"] = facets.distribution(), facets.stats()
    body["requestUid"] = uuid7()
    return body


def semantic_hit_count(result: IndexSearch, window: tuple[int, int, bool]) -> int | None:
    """``semanticHitCount``: the page's hits the vector leg found; None for a keyword search."""
    if not result.semantic:
        return None
    first, count = capped_window(window[0], window[1], result.max_total_hits)
    return sum(hit.semantic for hit in result.hits[first : first + count])


def processing_ms(started: float, transit_ns: int = 0) -> int:
    """``processingTimeMs``: the engine's work since ``started`` (``time.perf_counter()`` once the
    search holds its slot: the reference starts its clock after its search permit, and counts neither
    reading the request nor waiting in the queue), less ``transit_ns``, the time its messages spent
    between the gateway and the shards (``runner.Transit``), which one process does not have."""
    return max(int((time.perf_counter() - started) * 1000 - transit_ns / 1_000_000), 0)


def add_page_fields(
    body: dict[str, Any], window: tuple[int, int, bool], params: dict[str, Any], total: int
) -> None:
    """Offset/limit fields, or in page mode ``hitsPerPage, page, totalPages, totalHits``."""
    offset, limit, page_mode = window
    if page_mode:
        per_page = params.get("hitsPerPage")
        # page 0 asks for no hits, not for 0 hits per page
        per_page = DEFAULT_LIMIT if per_page is None else per_page
        body["hitsPerPage"] = per_page
        body["page"] = 1 if params.get("page") is None else params["page"]
        body["totalPages"] = math.ceil(total / per_page) if per_page else 0
        body["totalHits"] = total
    else:
        body["limit"] = limit
        body["offset"] = offset
        body["estimatedTotalHits"] = total
