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

from typing import Any

import numpy as np

from common.facets import COUNT, check_facets, facet_order, max_values, selected_fields
from shard.facet.counting import Counted, ValueCounter
from shard.index.facet_keys import decode_number

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
    table = counter.table(field)
    counts, firsts = table.count(counter.candidates, counter.everything)
    held = np.flatnonzero(counts)
    split = int(np.searchsorted(held, table.numbers))
    numbers, strings = held[:split], held[split:]
    stats = None
    if len(numbers):
        stats = [decode_number(table.encoded[numbers[0]]), decode_number(table.encoded[numbers[-1]])]
    shown = numbers if every_number else numbers[:limit]
    named = strings if every else strings[:limit]
    return {
        "order": order,
        "numbers": [
            [decode_number(table.encoded[ordinal]), count]
            for ordinal, count in zip(shown.tolist(), counts[shown].tolist(), strict=True)
        ],
        "strings": counter.labelled(
            field,
            [
                Counted(table.encoded[ordinal], count, first)
                for ordinal, count, first in zip(
                    named.tolist(), counts[named].tolist(), firsts[named].tolist(), strict=True
                )
            ],
        ),
        "stats": stats,
    }
