"""One shard's part of ``POST /indexes/{uid}/facet-search`` (search.md §3.1).

The query and each stored string are compared in the analyser's normal form (``normalize_value``:
case and diacritics folded as for searchable words, with the field's ``localizedAttributes``
locales), so ``ang`` finds ``Ängel``. That form is derived at query time from the stored keys
(filters keep their own form, keys.py), so every string of the field is read. A match is a prefix
of the whole value, with typos allowed by the query's byte length (``minWordSizeForTypos``) unless
typo tolerance is off, the attribute is in ``disableOnAttributes`` (plain prefix) or the query is in
``disableOnWords`` (equality only). Only string values are searched. As for distributions
(distribution.py), ``alpha`` order sends the first ``maxValuesPerFacet`` matches and ``count`` order
every match, so the gateway's sums are exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from itertools import islice
from typing import Any

from common.facets import COUNT, check_facet_search, facet_order, max_values
from shard.analysis import Analyzer
from shard.facet.counting import Counted, ValueCounter
from shard.facet.keys import STRING
from shard.index.settings import Settings


def shard_facet_search(counter: ValueCounter, analyzer: Analyzer, request: dict[str, Any]) -> dict[str, Any]:
    """``{"order", "maxValuesPerFacet", "hits": [[normalised, count, sequence, spelling]]}``."""
    name, settings = request["facetName"], counter.settings
    check_facet_search(name, settings)
    order, limit = facet_order(settings, name), max_values(settings)
    reply: dict[str, Any] = {"order": order, "maxValuesPerFacet": limit, "hits": []}
    field = counter.reader.field(name)
    if field is None:
        return reply
    normalize = partial(analyzer.normalize_value, locales=analyzer.locales_for(name))
    matches = _matches(counter, field, name, settings, normalize, (request.get("facetQuery") or "").strip())
    reply["hits"] = counter.labelled(field, list(matches if order == COUNT else islice(matches, limit)))
    return reply


def _matches(
    counter: ValueCounter,
    field: bytes,
    name: str,
    settings: Settings,
    normalize: Callable[[str], str],
    facet_query: str,
) -> Iterator[Counted]:
    query = normalize(facet_query)
    if not query:
        return counter.values(field, STRING)
    typo = settings.get("typoTolerance") or {}
    if query in {normalize(word.strip()) for word in typo.get("disableOnWords") or ()}:
        accept: Callable[[str], bool] = query.__eq__
    elif (typos := _allowed_typos(typo, name, len(query.encode()))) == 0:
        accept = partial(_starts_with, query)
    else:
        accept = _prefix_within(query, typos)
    return counter.values(field, STRING, keep=lambda encoded: accept(normalize(encoded.decode())))


def _starts_with(prefix: str, value: str) -> bool:
    return value.startswith(prefix)


def _allowed_typos(typo: dict[str, Any], name: str, size: int) -> int:
    if not typo.get("enabled", True) or name in (typo.get("disableOnAttributes") or ()):
        return 0
    sizes = typo.get("minWordSizeForTypos") or {}
    if size >= sizes.get("twoTypos", 9):
        return 2
    return 1 if size >= sizes.get("oneTypo", 5) else 0


def _prefix_within(query: str, typos: int) -> Callable[[str], bool]:
    """Whether some prefix of a value is within ``typos`` edits of ``query`` (Damerau, adjacent
    transpositions): one column of the edit-distance table per character of the value."""
    size = len(query)

    def within(value: str) -> bool:
        before: list[int] | None = None
        column = list(range(size + 1))
        if column[size] <= typos:
            return True
        for j, char in enumerate(value[: size + typos], start=1):
            nxt = [j] + [0] * size
            for i in range(1, size + 1):
                cost = 0 if query[i - 1] == char else 1
                best = min(column[i] + 1, nxt[i - 1] + 1, column[i - 1] + cost)
                if before is not None and i > 1 and query[i - 1] == value[j - 2] and query[i - 2] == char:
                    best = min(best, before[i - 2] + 1)
                nxt[i] = best
            if nxt[size] <= typos:
                return True
            if min(nxt) > typos and min(column) > typos:
                return False
            before, column = column, nxt
        return False

    return within
