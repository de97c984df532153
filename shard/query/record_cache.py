"""Decoded token records kept between searches, dropped whenever a batch changes the shard.

Ranking reads the records of the documents in the buckets it splits; popular queries keep landing on
the same documents, and decompressing and decoding a record costs far more than scoring it. Words are
interned so the cached records of one index share their vocabulary's strings.
"""

from __future__ import annotations

import sys
import threading

from shard.index.records import FieldTokens

DEFAULT_CAPACITY = 16_384


class RecordCache:
    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self.generation = 0
        self._records: dict[tuple[int, int], list[FieldTokens]] = {}
        self._lock = threading.Lock()

    def invalidate(self) -> None:
        """Called after every committed batch: cached records may describe replaced documents."""
        with self._lock:
            self.generation += 1
            self._records = {}

    def get(self, index_id: int, doc_id: int) -> list[FieldTokens] | None:
        return self._records.get((index_id, doc_id))

    def put(self, generation: int, index_id: int, doc_id: int, record: list[FieldTokens]) -> None:
        """Ignored when a batch committed since the reader's snapshot began (``generation`` is stale)."""
        with self._lock:
            if generation != self.generation:
                return
            if len(self._records) >= self.capacity:
                # Dropping the oldest half keeps the cost of eviction off the common path.
                keep = list(self._records.items())[self.capacity // 2 :]
                self._records = dict(keep)
            intern = sys.intern
            for entry in record:
                entry.words[:] = [intern(word) for word in entry.words]
            self._records[(index_id, doc_id)] = record
