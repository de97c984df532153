"""One shard's part of ``facetDistribution`` and ``facetStats`` (search.md §1.7), summable exactly.

What a shard sends per field makes the gateway's sums exact whatever the shard count:
- ``alpha`` order: the first ``maxValuesPerFacet`` numbers and strings in value order. A value among
  the first N of the merged order is among the first N of every shard holding it (a shard's values
  are a subset of the merged ones), so every count of it arrives. With at most 3000 candidates the
  reference orders numbers by their decimal strings instead: a shard with that few candidates sends
  all its numbers (it then has at most 3000), which covers every shard when the total is that small.
- ``count`` order: every value some candidate has. A value's merged rank says nothing about its rank
  on one shard, so any cut could drop counts; the payload grows with the field's distinct values
  among the candidates, which is the one cost of exactness here.
- stats: each shard's lowest and highest number among the candidates.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from common.facets import COUNT, check_facets, facet_order, max_values, selected_fields
from shard.facet.counting import Counted, ValueCounter
from shard.index.facet_keys import NUMBER, STRING, decode_number

LINEAR_SCAN_CANDIDATES = 3000
"""At most this many candidates: numbers are ordered by their decimal strings (the reference's
per-document path)."""


def shard_facets(counter: ValueCounter, patterns: list[str]) -> dict[str, Any]:
    """``{"fields": {name: {"order", "numbers": [[value, count]], "strings": [[normalised, count,
    sequence, spelling]], "stats": [min, max] | None}}, "maxValuesPerFacet"}``."""
    settings = counter.settings
    rules = settings.get("filterableAttributes") or []
    check_facets(patterns, rules)
    limit = max_values(settings)
    fields: dict[str, Any] = {}
    for name in selected_fields(patterns, rules, counter.reader.state.facet_fields):
        field = counter.reader.field(name)
        if field is not None:
            fields[name] = _field(counter, field, facet_order(settings, name), limit)
    return {"fields": fields, "maxValuesPerFacet": limit}


def _field(counter: ValueCounter, field: bytes, order: str, limit: int) -> dict[str, Any]:
    every = order == COUNT
    every_number = every or len(counter.candidates) <= LINEAR_SCAN_CANDIDATES
    numbers = _take(counter.values(field, NUMBER), None if every_number else limit)
    strings = _take(counter.values(field, STRING), None if every else limit)
    first = numbers[0] if numbers else None if every_number else next(counter.values(field, NUMBER), None)
    stats = None
    if first is not None:
        low = decode_number(first.encoded)
        high = decode_number(numbers[-1].encoded) if every_number else counter.last_number(field)
        stats = [low, low if high is None else high]
    return {
        "order": order,
        "numbers": [[decode_number(value.encoded), value.count] for value in numbers],
        "strings": counter.labelled(field, strings),
        "stats": stats,
    }


def _take(values: Any, limit: int | None) -> list[Counted]:
    return list(values if limit is None else islice(values, limit))
