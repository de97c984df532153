"""Sort columns: one faceted field's values in sort order and every document's place in it (search.md §5).

Sorting a bucket, or measuring distances for geo, needs each document's value, while facet keys map
values to documents. A column inverts one field's keys once per shard generation (numbers, then strings,
already in key order) and stays in the read cache, so a sort costs array lookups over the bucket it
splits instead of a walk over the field's values. A document with several values sorts at its best one:
the smallest ascending, the largest descending; numbers come before strings both ways, missing last.
"""

from __future__ import annotations

import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

from shard.facet.reader import FacetReader
from shard.index.facet_keys import NUMBER, STRING, decode_number
from shard.index.postings import decode_bitmap, scan
from shard.index.read_cache import SORT_COLUMNS, CacheRef, cached_value

Ranks = npt.NDArray[np.int32]
FacetValue = float | str
MISSING = np.iinfo(np.int32).max
"""The rank of a document without a value: after every other."""

"""The shard's read cache and its generation when the snapshot began."""


@dataclass(frozen=True)
class SortColumn:
    values: list[FacetValue]
    """Distinct values in ascending order: the numbers, then the strings."""
    numbers: int
    ascending: Ranks
    """Per internal document id: its rank in ascending order (the ordinal of its smallest value)."""
    descending: Ranks
    """Per internal document id: its rank in descending order (from its largest value)."""

    def ranks(self, ids: npt.NDArray[np.uint32], ascending: bool) -> Ranks:
        return (self.ascending if ascending else self.descending)[ids]

    def value(self, rank: int, ascending: bool) -> FacetValue | None:
        """The value a rank stands for; None for documents without one."""
        if rank == MISSING:
            return None
        if ascending:
            return self.values[rank]
        if rank < self.numbers:
            return self.values[self.numbers - 1 - rank]
        return self.values[len(self.values) - 1 - (rank - self.numbers)]

    @property
    def weight(self) -> int:
        return int(self.ascending.nbytes + self.descending.nbytes) + 64 * len(self.values)


def sort_column(reader: FacetReader, field: str, cached: CacheRef | None) -> SortColumn:
    """The field's column in the reader's snapshot, built on first use in a generation."""
    prefix = reader.field(field)
    if prefix is None or cached is None:
        return _build(reader, prefix)
    key = (SORT_COLUMNS, int.from_bytes(prefix[:4], "big"), int.from_bytes(prefix[4:], "big"))
    return cached_value(cached, key, lambda: _build(reader, prefix), lambda column: column.weight)


def _build(reader: FacetReader, prefix: bytes | None) -> SortColumn:
    live = reader.state.live
    size = live.max() + 1 if live else 0
    low = np.full(size, MISSING, dtype=np.int32)
    high = np.full(size, -1, dtype=np.int32)
    values: list[FacetValue] = []
    numbers = 0
    if prefix is not None:
        chunks: list[array.array[int]] = []
        counts: list[int] = []
        for kind in (NUMBER, STRING):
            start = prefix + kind
            for key, stored in scan(reader.txn, reader.db, start):
                encoded = key[len(start) :]
                values.append(decode_number(encoded) if kind == NUMBER else encoded.decode())
                docs = decode_bitmap(stored) & live
                chunks.append(docs.to_array())
                counts.append(len(docs))
            if kind == NUMBER:
                numbers = len(values)
        if chunks:
            ids = np.concatenate([np.frombuffer(chunk, dtype=np.uint32) for chunk in chunks])
            ordinals = np.repeat(np.arange(len(values), dtype=np.int32), counts)
            np.minimum.at(low, ids, ordinals)
            np.maximum.at(high, ids, ordinals)
    descending = np.where(
        high < 0, MISSING, np.where(high < numbers, numbers - 1 - high, numbers + len(values) - 1 - high)
    ).astype(np.int32)
    return SortColumn(values, numbers, low, descending)


def to_bitmap(ids: npt.NDArray[np.uint32]) -> BitMap:
    return BitMap(array.array("I", ids.astype(np.uint32).tobytes()))


def to_ids(docs: BitMap) -> npt.NDArray[np.uint32]:
    return np.frombuffer(docs.to_array(), dtype=np.uint32)


def numbers_between(
    column: SortColumn, low: float | None, high: float | None, *, strict: bool
) -> BitMap | None:
    """Documents having a number in the range (None bounds are open; ``strict`` excludes the bounds
    given), from the column's ranks alone; None when some document's numbers straddle the range, which
    only its keys can settle.

    A broad range over a large field would otherwise decode one bitmap per distinct value (150,000 of
    them on ``cities.id``); here it is array arithmetic: a document matches when its smallest or its
    largest number falls in the range, and cannot when both lie on one side of it.
    """
    count = column.numbers
    values = column.values
    first = 0 if low is None else (bisect_right if strict else bisect_left)(values, low, 0, count)
    end = count if high is None else (bisect_left if strict else bisect_right)(values, high, 0, count)
    if first >= end:
        return BitMap()
    smallest = column.ascending
    descending = column.descending
    with_number = smallest < count
    # The largest number is known when the document has no string (its descending rank is a number's).
    only_numbers = descending < count
    largest = count - 1 - descending
    matched = with_number & (
        ((smallest >= first) & (smallest < end)) | (only_numbers & (largest >= first) & (largest < end))
    )
    unsettled = with_number & ~matched & (smallest < first) & ~(only_numbers & (largest < first))
    if unsettled.any():
        return None
    return to_bitmap(np.flatnonzero(matched).astype(np.uint32))
