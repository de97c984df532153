"""Reading one index's facet values in a read snapshot: the lookups filter operators are made of.

Every lookup is a get or one cursor walk over a key range of a single field and kind (see keys.py),
and returns the union of the matching values' bitmaps.
"""

from __future__ import annotations

from pyroaring import BitMap

from shard.index.env import Database, Txn, index_prefix
from shard.index.facet_keys import NUMBER, STRING, encode_number, encode_string, field_prefix
from shard.index.postings import decode_bitmap, scan
from shard.index.state import IndexState


class FacetReader:
    def __init__(self, txn: Txn, db: Database, index_id: int, state: IndexState) -> None:
        self.txn = txn
        self.db = db
        self.state = state
        self._index = index_prefix(index_id)

    def field(self, name: str) -> bytes | None:
        """The key prefix of a field, None when no document of the index has it."""
        field_id = self.state.known_facet_field(name)
        return None if field_id is None else field_prefix(self._index, field_id)

    def docs(self, key: bytes) -> BitMap:
        stored = self.txn.get(key, db=self.db)
        return BitMap() if stored is None else decode_bitmap(stored)

    def number(self, field: bytes, value: float) -> BitMap:
        return self.docs(field + NUMBER + encode_number(value))

    def string(self, field: bytes, value: str) -> BitMap:
        return self.docs(field + STRING + encode_string(value))

    def numbers(self, field: bytes, low: float | None, high: float | None, *, strict: bool = False) -> BitMap:
        """Documents with a number in ``[low, high]``; None is unbounded. ``strict`` excludes the
        bound given (operators ``>`` and ``<`` give only one)."""
        return self._range(
            field + NUMBER,
            None if low is None else encode_number(low),
            None if high is None else encode_number(high),
            strict,
        )

    def strings(self, field: bytes, low: str | None, high: str | None, *, strict: bool = False) -> BitMap:
        """Documents with a normalised string in ``[low, high]``, code-point order; see ``numbers``."""
        return self._range(
            field + STRING,
            None if low is None else encode_string(low),
            None if high is None else encode_string(high),
            strict,
        )

    def string_prefix(self, field: bytes, prefix: str) -> BitMap:
        start = field + STRING + encode_string(prefix)
        return BitMap.union(BitMap(), *(decode_bitmap(value) for _, value in scan(self.txn, self.db, start)))

    def strings_containing(self, field: bytes, needle: str) -> BitMap:
        """A scan of every string of the field: substrings have no key order to seek by."""
        kind = field + STRING
        found = [
            decode_bitmap(value)
            for key, value in scan(self.txn, self.db, kind)
            if needle in key[len(kind) :].decode()
        ]
        return BitMap.union(BitMap(), *found)

    def _range(self, kind: bytes, low: bytes | None, high: bytes | None, strict: bool) -> BitMap:
        found: list[BitMap] = []
        for key, value in scan(self.txn, self.db, kind + (low or b""), kind):
            encoded = key[len(kind) :]
            if strict and encoded == low:
                continue
            if high is not None and (encoded > high or (strict and encoded == high)):
                break
            found.append(decode_bitmap(value))
        return BitMap.union(BitMap(), *found)
