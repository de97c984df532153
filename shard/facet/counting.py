"""Counting one field's facet values within a set of candidate documents, in key order.

Distributions and facet search both walk a field's number or string keys (see keys.py), keep the
values some candidate has, and for strings name the spelling to show: the original spelling of the
value's first candidate document, with that document's sequence so that the gateway can pick the
first in insertion order across shards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pyroaring import BitMap

from shard.facet.reader import FacetReader
from shard.facet.table import FacetTable, facet_table
from shard.index.env import Database, StoreEnv, Txn
from shard.index.postings import decode_bitmap, scan
from shard.index.read_cache import CacheRef
from shard.index.sequence import read_sequences
from shard.index.settings import Settings
from shard.index.state import IndexState


@dataclass(frozen=True, slots=True)
class Counted:
    encoded: bytes
    """The value as its key stores it (after the field prefix and kind)."""
    count: int
    first: int
    """The lowest candidate document id holding the value (ids follow insertion order)."""


class ValueCounter:
    """Counts within ``candidates`` (``everything``: they are all the index's live documents, so a
    value's own bitmap is the answer and no intersection is needed), with the index's settings."""

    def __init__(
        self,
        env: StoreEnv,
        txn: Txn,
        index_id: int,
        settings: Settings,
        state: IndexState,
        candidates: BitMap,
        cache_ref: CacheRef | None = None,
    ) -> None:
        """``cache_ref``: the shard's read cache, which keeps the facet tables."""
        self.env = env
        self.txn = txn
        self.db: Database = env.facets
        self.index_id = index_id
        self.settings = settings
        self.reader = FacetReader(txn, env.facets, index_id, state)
        self.candidates = candidates
        self.everything = len(candidates) == len(state.live)
        self.cache_ref = cache_ref

    def values(
        self,
        field: bytes,
        kind: bytes,
        start: bytes = b"",
        *,
        prefixed: bool = False,
        keep: Callable[[bytes], bool] | None = None,
    ) -> Iterator[Counted]:
        """The values of one kind that some candidate has, in key order, from ``start`` on (only those
        starting with it when ``prefixed``, and ``keep`` accepts, before any bitmap is decoded)."""
        prefix = field + kind
        for key, stored in scan(self.txn, self.db, prefix + start, prefix + start if prefixed else prefix):
            if keep is not None and not keep(key[len(prefix) :]):
                continue
            counted = self._count(key[len(prefix) :], stored)
            if counted is not None:
                yield counted

    def count(self, field: bytes, kind: bytes, encoded: bytes) -> Counted | None:
        """One value, when some candidate has it."""
        stored = self.txn.get(field + kind + encoded, db=self.db)
        return None if stored is None else self._count(encoded, stored)

    def _count(self, encoded: bytes, stored: bytes) -> Counted | None:
        docs = decode_bitmap(stored)
        if not self.everything:
            docs &= self.candidates
        if not docs:
            return None
        return Counted(encoded, len(docs), docs.min())

    def table(self, field: bytes) -> FacetTable:
        """The field's facet table in this snapshot (``table.py``), from the read cache when built."""
        return facet_table(self.reader, field, self.index_id, self.cache_ref)

    def labelled(self, field: bytes, strings: list[Counted]) -> list[list[object]]:
        """``[normalised, count, sequence, spelling]`` per string value: what the gateway merges."""
        if not strings:
            return []
        table = self.table(field)
        sequences = read_sequences(self.env, self.txn, self.index_id, [value.first for value in strings])
        return [
            [value.encoded.decode(), value.count, sequence, table.spelling(value.encoded, value.first)]
            for value, sequence in zip(strings, sequences, strict=True)
        ]
