"""One index's search, from validated parameters to its response body: the single-search route and
each query of a non-federated multi-search."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from sanic import Sanic

from common.timing import Steps
from gateway.foreign import drop, foreign_keys_soon, hydrate
from gateway.search.details import PrimaryKeys, add_details, permitted, query_metadata
from gateway.search.params import page_window
from gateway.search.personalize import personalized
from gateway.search.pins import pins_soon, place
from gateway.search.response import search_response, semantic_hit_count
from gateway.search.runner import search_index


async def run_search(
    app: Sanic,
    uid: str,
    params: dict[str, Any],
    steps: Steps | None,
    primary_keys: PrimaryKeys | None,
    index_field: bool = False,
) -> dict[str, Any]:
    """Called holding a search slot. ``steps``: with ``showPerformanceDetails``; ``primary_keys``: with
    the metadata header; ``index_field``: the body starts with ``indexUid`` (multi-search)."""
    started = time.perf_counter()
    search_steps = permitted(steps)
    window = page_window(params)
    foreign_keys = foreign_keys_soon(app, uid)
    pins = pins_soon(app, uid, params)
    try:
        found = await search_index(app, uid, params, window[0] + window[1], search_steps)
        chosen = [] if pins is None else await pins
        if chosen:
            # Rules are read while the search runs, as most pin nothing; these pin: search again,
            # the shards setting the pinned documents apart.
            # The query's vector is known now: the second search does not embed the text again.
            again = params if found.query_vector is None else {**params, "vector": found.query_vector}
            found = await search_index(app, uid, again, window[0] + window[1], search_steps, chosen)
    except BaseException:
        for future in (foreign_keys, pins):
            if future is not None:
                drop(future)
        raise
    if found.pinned:
        found = replace(
            found,
            hits=place(found.hits, found.pinned, window[0] + window[1]),
            candidates=found.candidates + len(found.pinned),
        )
    body = search_response(found, params, window, started)
    await hydrate(app, uid, body["hits"], foreign_keys)
    body["hits"] = await personalized(
        app.ctx.reranker, params.get("personalize"), [params.get("q") or ""], body["hits"]
    )
    if index_field:
        body = {"indexUid": uid, **body}
    if search_steps is not None:
        search_steps.lap("format")
    metadata = None if primary_keys is None else query_metadata(uid, (await primary_keys)[uid])
    body = add_details(body, metadata, steps)
    semantic_hits = semantic_hit_count(found, window)
    if semantic_hits is not None:
        body["semanticHitCount"] = semantic_hits  # last, after the details, as the reference has it
    return body
