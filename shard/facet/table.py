"""Facet tables: one field's values and every document's value ordinals, for counting with numpy.

A distribution over a query's candidates used to decode each value's bitmap and intersect it with them:
with 250 countries and a few thousand candidates, 250 decodes and intersections per field and search,
most of them empty. A table inverts the field's keys once per shard generation (like the sort columns of
``column.py``) and stays in the read cache, so counting is a gather of the candidates' ordinals and one
``bincount``, whatever the number of values. It also keeps each value's spellings, which naming a
value's shown spelling read from one cursor walk per value.
"""

from __future__ import annotations

import array
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

from shard.facet.reader import FacetReader
from shard.index.facet_keys import NUMBER, SPELLING, STRING
from shard.index.postings import decode_bitmap, scan
from shard.index.read_cache import FACET_TABLES, CacheRef, cached_value

Counts = npt.NDArray[np.int64]
Ids = npt.NDArray[np.uint32]
NO_DOCUMENT = np.iinfo(np.uint32).max
"""The first document of a value no candidate has."""
Spellings = tuple[tuple[str, BitMap | None], ...]
"""A string's original spellings, each with its documents (None when it is the only one)."""


@dataclass(frozen=True)
class FacetTable:
    encoded: list[bytes]
    """Each value as its key stores it after the field prefix and kind: the numbers, then the strings,
    each kind in key order (numbers in numeric order)."""
    numbers: int
    """How many of ``encoded`` are numbers."""
    ordinals: npt.NDArray[np.int32]
    """The values' ordinals document after document (see ``offsets``)."""
    offsets: npt.NDArray[np.int64]
    """Per internal document id ``d``: its ordinals are ``ordinals[offsets[d]:offsets[d + 1]]``."""
    single: npt.NDArray[np.int32] | None
    """When no document has two values: each document's ordinal, -1 without one (a plain gather)."""
    counts: Counts
    """Each value's live documents: the counts over every candidate."""
    firsts: Ids
    """Each value's lowest live document."""
    spellings: dict[bytes, Spellings]

    @property
    def weight(self) -> int:
        arrays = (self.ordinals, self.offsets, self.counts, self.firsts, self.single)
        size = sum(int(part.nbytes) for part in arrays if part is not None)
        return size + sum(64 + len(value) for value in self.encoded) + 120 * len(self.spellings)

    def count(self, candidates: BitMap, everything: bool) -> tuple[Counts, Ids]:
        """Each value's count among ``candidates`` and its lowest candidate (``NO_DOCUMENT`` for none);
        ``everything``: they are all the live documents, whose figures the table holds."""
        if everything:
            return self.counts, self.firsts
        ids = np.frombuffer(candidates.to_array(), dtype=np.uint32)
        ids = ids[ids < len(self.offsets) - 1]
        if self.single is not None:
            ordinals = self.single[ids]
            held = ordinals >= 0
            ordinals, docs = ordinals[held], ids[held]
        else:
            starts = self.offsets[ids]
            lengths = self.offsets[ids + 1] - starts
            docs = np.repeat(ids, lengths)
            # Each gathered entry's place: its document's start plus its rank within the document.
            ends = np.cumsum(lengths)
            within = np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - lengths, lengths)
            ordinals = self.ordinals[np.repeat(starts, lengths) + within]
        counts = np.bincount(ordinals, minlength=len(self.encoded))
        firsts = np.full(len(self.encoded), NO_DOCUMENT, dtype=np.uint32)
        np.minimum.at(firsts, ordinals, docs)
        return counts, firsts

    def spelling(self, encoded: bytes, first: int) -> str:
        """The original spelling of the value in document ``first``, as the gateway shows it."""
        spellings = self.spellings.get(encoded, ())
        for spelling, docs in spellings:
            if docs is None or first in docs:
                return spelling
        return encoded.decode()


def facet_table(reader: FacetReader, field: bytes, index_id: int, cached: CacheRef | None) -> FacetTable:
    """The table of the field whose key prefix is ``field``, built on first use in a generation."""
    key = (FACET_TABLES, index_id, int.from_bytes(field, "big"))
    return cached_value(cached, key, lambda: _build(reader, field), lambda table: table.weight)


def _build(reader: FacetReader, field: bytes) -> FacetTable:
    live = reader.state.live
    size = live.max() + 1 if live else 0
    encoded: list[bytes] = []
    chunks: list[array.array[int]] = []
    numbers = 0
    for kind in (NUMBER, STRING):
        start = field + kind
        for key, stored in scan(reader.txn, reader.db, start):
            encoded.append(key[len(start) :])
            chunks.append((decode_bitmap(stored) & live).to_array())
        if kind == NUMBER:
            numbers = len(encoded)
    counts = np.array([len(chunk) for chunk in chunks], dtype=np.int64)
    firsts = np.array([chunk[0] if chunk else NO_DOCUMENT for chunk in chunks], dtype=np.uint32)
    docs = np.concatenate([np.frombuffer(chunk, dtype=np.uint32) for chunk in chunks]) if chunks else _NONE
    by_value = np.repeat(np.arange(len(encoded), dtype=np.int32), counts)
    order = np.argsort(docs, kind="stable")
    ordinals = by_value[order]
    per_doc = np.bincount(docs, minlength=size)
    offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(per_doc, out=offsets[1:])
    single = None
    if not len(per_doc) or per_doc.max() <= 1:
        single = np.full(size, -1, dtype=np.int32)
        single[docs] = by_value
    return FacetTable(encoded, numbers, ordinals, offsets, single, counts, firsts, _spellings(reader, field))


def _spellings(reader: FacetReader, field: bytes) -> dict[bytes, Spellings]:
    start = field + SPELLING
    found: dict[bytes, list[tuple[str, bytes]]] = {}
    for key, stored in scan(reader.txn, reader.db, start):
        normalised, _, original = key[len(start) :].partition(b"\x00")
        found.setdefault(normalised, []).append((original.decode(), stored))
    return {
        normalised: ((entries[0][0], None),)
        if len(entries) == 1
        else tuple((spelling, decode_bitmap(stored)) for spelling, stored in entries)
        for normalised, entries in found.items()
    }


_NONE = np.zeros(0, dtype=np.uint32)
