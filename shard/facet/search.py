"""One shard's part of ``POST /indexes/{uid}/facet-search`` (search.md §3.1).

The query and each stored string are compared in the analyser's normal form (``normalize_value``:
case and diacritics folded as for searchable words, with the field's ``localizedAttributes``
locales), so ``ang`` finds ``Ängel``. That form is derived from the stored keys (filters keep their
own form, keys.py): once per field and shard generation, every string of the field is normalised and
the forms are kept sorted in the read cache (``SearchForms``), so a later prefix is two bisections and
a typo query scans the forms without decoding a key. A match is a prefix
of the whole value, with typos allowed by the query's byte length (``minWordSizeForTypos``) unless
typo tolerance is off, the attribute is in ``disableOnAttributes`` (plain prefix) or the query is in
``disableOnWords`` (equality only). Only string values are searched. As for distributions
(distribution.py), ``alpha`` order sends the first ``maxValuesPerFacet`` matches and ``count`` order
every match, so the gateway's sums are exact.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from functools import partial
from itertools import islice
from typing import Any

from common.facets import COUNT, check_facet_search, facet_order, max_values
from shard.analysis import Analyzer
from shard.facet.counting import Counted, ValueCounter
from shard.index.facet_keys import STRING
from shard.index.postings import scan
from shard.index.read_cache import FACET_FORMS, CacheRef, cached_value
from shard.index.settings import Settings

_LAST_CHARACTER = chr(0x10FFFF)
_BYTES_PER_FORM = 120
"""Rough memory of one (form, key) pair with its list slots: its cache weight."""


class SearchForms:
    """A field's string keys ordered by their search form."""

    def __init__(self, pairs: list[tuple[str, bytes]]) -> None:
        pairs.sort()
        self.forms = [form for form, _ in pairs]
        self.keys = [key for _, key in pairs]

    @property
    def weight(self) -> int:
        text = sum(len(form) + len(key) for form, key in zip(self.forms, self.keys, strict=True))
        return text + _BYTES_PER_FORM * len(self.keys)

    def starting_with(self, prefix: str) -> list[bytes]:
        start = bisect_left(self.forms, prefix)
        return self.keys[start : bisect_left(self.forms, prefix + _LAST_CHARACTER, start)]

    def equal_to(self, form: str) -> list[bytes]:
        return self.keys[bisect_left(self.forms, form) : bisect_right(self.forms, form)]

    def accepted(self, accept: Callable[[str], bool]) -> list[bytes]:
        return [key for form, key in zip(self.forms, self.keys, strict=True) if accept(form)]


def search_forms(
    counter: ValueCounter, field: bytes, normalize: Callable[[str], str], cached: CacheRef | None
) -> SearchForms:
    """The field's forms, from the read cache when this generation already built them."""
    # Within a generation the field's locales and the analyser are fixed by the settings, so the field's
    # key prefix (index id + field id) identifies its forms.
    prefix = field + STRING

    def build() -> SearchForms:
        encoded = [key[len(prefix) :] for key, _ in scan(counter.txn, counter.db, prefix)]
        return SearchForms([(normalize(key.decode()), key) for key in encoded])

    key = (FACET_FORMS, counter.index_id, int.from_bytes(field, "big"))
    return cached_value(cached, key, build, lambda forms: forms.weight)


def shard_facet_search(
    counter: ValueCounter,
    analyzer: Analyzer,
    request: dict[str, Any],
    cached: CacheRef | None = None,
) -> dict[str, Any]:
    """``{"order", "maxValuesPerFacet", "hits": [[normalised, count, sequence, spelling]]}``."""
    name, settings = request["facetName"], counter.settings
    check_facet_search(name, settings)
    order, limit = facet_order(settings, name), max_values(settings)
    reply: dict[str, Any] = {"order": order, "maxValuesPerFacet": limit, "hits": []}
    field = counter.reader.field(name)
    if field is None:
        return reply
    normalize = partial(analyzer.normalize_value, locales=analyzer.locales_for(name))
    facet_query = (request.get("facetQuery") or "").strip()
    matches = _matches(counter, field, name, settings, normalize, facet_query, cached)
    reply["hits"] = counter.labelled(field, list(matches if order == COUNT else islice(matches, limit)))
    return reply


def _matches(
    counter: ValueCounter,
    field: bytes,
    name: str,
    settings: Settings,
    normalize: Callable[[str], str],
    facet_query: str,
    cached: CacheRef | None,
) -> Iterator[Counted]:
    """Matching values with a candidate, in key order (the order ``alpha`` pages by)."""
    query = normalize(facet_query)
    if not query:
        return counter.values(field, STRING)
    forms = search_forms(counter, field, normalize, cached)
    typo = settings.get("typoTolerance") or {}
    if query in {normalize(word.strip()) for word in typo.get("disableOnWords") or ()}:
        keys = forms.equal_to(query)
    elif (typos := _allowed_typos(typo, name, len(query.encode()))) == 0:
        keys = forms.starting_with(query)
    else:
        keys = forms.accepted(_prefix_within(query, typos))
    return _counted(counter, field, sorted(keys))


def _counted(counter: ValueCounter, field: bytes, keys: list[bytes]) -> Iterator[Counted]:
    for key in keys:
        counted = counter.count(field, STRING, key)
        if counted is not None:
            yield counted


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
