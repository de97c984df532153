"""Facets of a federated search (search.md §2.3): ``facetsByIndex``, or merged with ``mergeFacets``.

Each index of ``facetsByIndex`` gets one facet run beside the hit searches, so its errors carry the
federation's prefix. It counts over the candidates of the index's query, or of the union of its
queries' candidates when several name it (a document matched by two counts once). An index that no
query names is checked (it must exist, its facets be filterable) and shows its fields with no values.

A keyword query's run asks for no hits. A hybrid one asks for the hits its query asks for: as in its
own search (search.md §7.6), whether its keyword hits suffice at that depth decides what it counts,
the keyword candidates alone or, once the vector leg runs, every filtered document (the reference
answers so: a federation whose ``limit`` the keyword hits fill counts them alone).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sanic import Sanic

from common.errors import ApiError
from common.facets import COUNT
from gateway.search.facets import Facets, FieldCounts, merge_facets
from gateway.search.hybrid import semantic_kind
from gateway.search.multi import Query
from gateway.search.runner import search_index, union_params


class FacetsByIndexError(ApiError):
    """An error of one index's facets, located in ``federation.facetsByIndex``; never a 404."""

    def __init__(self, uid: str, error: ApiError, queried: bool) -> None:
        code = "invalid_multi_search_facets" if error.code == "invalid_search_facets" else error.code
        note = "" if queried else f"\n - Note: index `{uid}` is not used in queries"
        super().__init__(code, f"Inside `.federation.facetsByIndex.{uid}`: {error.message}{note}")

    @property
    def status(self) -> int:
        return 400 if self.code == "index_not_found" else super().status


async def federated_facets(
    app: Sanic, queries: Sequence[Query], federation: dict[str, Any], wanted: int
) -> dict[str, Any] | None:
    """The response's facet keys; None when ``facetsByIndex`` names no index. ``wanted``: the hits
    each query asks for (the federation's offset + limit)."""
    by_index: dict[str, list[str] | None] = federation.get("facetsByIndex") or {}
    if not by_index:
        return None
    runs = [_index_facets(app, uid, patterns or [], queries, wanted) for uid, patterns in by_index.items()]
    found: list[Facets] = []
    for outcome in await asyncio.gather(*runs, return_exceptions=True):
        if isinstance(outcome, BaseException):
            raise outcome
        found.append(outcome)
    merge = federation.get("mergeFacets")
    if merge is None:
        return {
            "facetsByIndex": {
                uid: {"distribution": facets.distribution(), "stats": facets.stats()}
                for uid, facets in zip(by_index, found, strict=True)
            }
        }
    merged = _merged(list(by_index), found)
    limit = merge.get("maxValuesPerFacet")
    return {"facetDistribution": merged.distribution_within(limit), "facetStats": merged.stats()}


async def _index_facets(
    app: Sanic, uid: str, patterns: list[str], queries: Sequence[Query], wanted: int
) -> Facets:
    mine = [query for query in queries if query.index_uid == uid]
    try:
        params = await _facet_params(app, uid, patterns, mine)
        result = await search_index(app, uid, params, wanted if semantic_kind(params) else 0)
        facets = merge_facets(result.facets, result.candidates, patterns)
    except ApiError as error:
        raise FacetsByIndexError(uid, error, bool(mine)) from None
    if not mine:
        facets.fields = {name: FieldCounts(counts.order) for name, counts in facets.fields.items()}
    return facets


async def _facet_params(app: Sanic, uid: str, patterns: list[str], mine: list[Query]) -> dict[str, Any]:
    """One query's own parameters; several queries' under ``facetUnion``, which the shards count over
    the union of their candidates (each with its own term counts for the frequency strategy)."""
    if len(mine) <= 1:
        return {**(mine[0].params if mine else {}), "facets": patterns}
    return {"facets": patterns, "facetUnion": await union_params(app, uid, [query.params for query in mine])}


class MergedFacets(Facets):
    """Facets of several indexes: each index's shown values (its own cut), summed per facet."""

    def distribution_within(self, limit: int | None) -> dict[str, dict[str, int]]:
        return {
            name: counts.distribution(limit, self.candidates) for name, counts in sorted(self.fields.items())
        }


def _merged(uids: list[str], found: list[Facets]) -> MergedFacets:
    merged = MergedFacets()
    ordered_by: dict[str, str] = {}
    for uid, facets in zip(uids, found, strict=True):
        merged.candidates += facets.candidates
        for name, counts in facets.fields.items():
            previous = ordered_by.setdefault(name, uid)
            into = merged.fields.setdefault(name, FieldCounts(counts.order))
            if into.order != counts.order:
                raise ApiError(
                    "invalid_multi_search_facet_order",
                    f"Inconsistent order for values in facet `{name}`: index `{previous}` orders"
                    f" {_said(into.order)}, but index `{uid}` orders {_said(counts.order)}.\n - Hint:"
                    " Remove `federation.mergeFacets` or change `faceting.sortFacetValuesBy` to be"
                    " consistent in settings.",
                )
            into.merge(counts.top(facets.max_values, facets.candidates))
    return merged


def _said(order: str) -> str:
    return "by count" if order == COUNT else "alphabetically"
