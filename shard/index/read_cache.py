"""Decoded data kept between searches, dropped whenever a batch changes the shard.

Ranking reads the token records of the documents in the buckets it splits and every search reads the
documents of its page; popular queries keep landing on the same documents, and decompressing and
decoding costs far more than using the result. Typing a query resolves its earlier words again at every
keystroke, and its lookups (typos walk hundreds of vocabulary keys, stems stem up to a few thousand words,
splits read two postings per cut, a prefix steps through up to a thousand words' keys) are kept too.
Entries are weighed (roughly their bytes in memory) so the cache stays bounded whatever the documents'
size.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

DEFAULT_BUDGET = 256 << 20
"""For stores opened outside a cluster (tests, ``bench.inprocess``); a cluster's shards each get their
share of ``--read-cache-size``."""
(
    RECORDS,
    DOCUMENT_BLOCKS,
    SORT_COLUMNS,
    GEO_POINTS,
    GEO_SHAPES,
    FACET_FORMS,
    TYPO_WORDS,
    STEM_WORDS,
    WORD_SPLITS,
    PREFIX_WORDS,
    TABLE_SIZES,
    PHRASE_DOCS,
    FACET_TABLES,
    FIELD_LENGTHS,
) = range(14)
"""Kinds of cached value, the first part of a key ``(kind, index id, id)``."""

Key = tuple[int, int, Hashable]
T = TypeVar("T")


class ReadCache:
    """Values valid for one shard generation: ``put`` from a reader whose snapshot predates the last
    batch is ignored, so a stale value never outlives the batch that replaced it."""

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        self.budget = budget
        self.generation = 0
        self._entries: OrderedDict[Key, tuple[Any, int]] = OrderedDict()
        self._used = 0
        self._lock = threading.Lock()

    def invalidate(self) -> None:
        """Called after every committed batch."""
        with self._lock:
            self.generation += 1
            self._entries = OrderedDict()
            self._used = 0

    def get(self, key: Key) -> Any:
        found = self._entries.get(key)
        return None if found is None else found[0]

    def put(self, generation: int, key: Key, value: Any, weight: int) -> None:
        with self._lock:
            if generation != self.generation or weight > self.budget:
                return
            entries = self._entries
            # The oldest entries go, one by one until the new one fits: dropping half of a cache of a
            # million records at once (rebuilding the dict, summing its weights) took one search
            # 0.1-1.6 s, the p99 of the 1M-document typo queries.
            while self._used + weight > self.budget and entries:
                self._used -= entries.popitem(last=False)[1][1]
            entries[key] = (value, weight)
            self._used += weight


CacheRef = tuple[ReadCache, int]
"""A shard's read cache and its generation when a reader's snapshot began."""


def cached_value(ref: CacheRef | None, key: Key, build: Callable[[], T], weight: Callable[[T], int]) -> T:
    """The value under ``key`` in this generation, built and kept on first use (``build`` may depend on
    nothing but the snapshot and the key); always built when there is no cache."""
    if ref is None:
        return build()
    cache, generation = ref
    found = cache.get(key)
    if found is None:
        found = build()
        cache.put(generation, key, found, weight(found))
    return found  # type: ignore[no-any-return]
