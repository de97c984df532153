"""Postings: term -> document bitmap per searchable field, for words, short prefixes and stems.

Keys are ``index id + term + 0x00 + field id (u16)``: term-first, so every field of one term is one
contiguous range (an exact lookup is one short range scan) and all terms sharing a prefix are
contiguous too (a prefix expansion reads only the matching words, never the whole vocabulary).
Normalised terms never contain 0x00: control characters are separators.

A batch accumulates its changes in a ``PostingsDelta`` and merges each touched key once at flush, so
a key shared by many documents is read, decoded and written once per batch, not once per document.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator

from pyroaring import BitMap

from shard.index.env import Database, Txn, index_prefix

_FIELD = struct.Struct(">H")
_SEPARATOR = b"\x00"
# Bitmaps of at most this many ids are stored as a plain sorted array (u16 when every id fits): most
# words of a vocabulary occur in a handful of documents, and roaring's headers would double their size.
_ARRAY_MAX = 8
_ARRAY_TAG = b"\x00"
_ROARING_TAG = b"\x01"
_SHORT_TAG = b"\x02"
# Prefixes this short (in characters) are precomputed; longer ones are expanded from the words table.
SHORT_PREFIX_LENGTHS = (1, 2)

TermKey = bytes
"""A full postings key: index prefix, term, separator, field id."""


def encode_bitmap(bitmap: BitMap) -> bytes:
    count = len(bitmap)
    if count <= _ARRAY_MAX:
        if not count or bitmap.max() <= 0xFFFF:
            return _SHORT_TAG + struct.pack(f">{count}H", *bitmap)
        return _ARRAY_TAG + struct.pack(f">{count}I", *bitmap)
    bitmap.run_optimize()
    return _ROARING_TAG + bitmap.serialize()


def decode_bitmap(data: bytes) -> BitMap:
    tag = data[:1]
    if tag == _SHORT_TAG:
        return BitMap(struct.unpack(f">{(len(data) - 1) // 2}H", data[1:]))
    if tag == _ARRAY_TAG:
        return BitMap(struct.unpack(f">{(len(data) - 1) // 4}I", data[1:]))
    return BitMap.deserialize(data[1:])


def term_keys(index_id: int, terms: Iterable[str], field_id: int) -> list[TermKey]:
    prefix = index_prefix(index_id)
    suffix = _SEPARATOR + _FIELD.pack(field_id)
    return [prefix + term.encode() + suffix for term in terms]


def split_key(key: bytes) -> tuple[str, int]:
    """The term and field id of a full key."""
    field_id: int = _FIELD.unpack(key[-2:])[0]
    return key[4:-3].decode(), field_id


def scan(txn: Txn, db: Database, start: bytes, within: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
    """Every (key, value) from ``start`` on whose key starts with ``within`` (default: ``start``), in
    key order."""
    prefix = start if within is None else within
    cursor = txn.cursor(db)
    if not cursor.set_range(start):
        return
    for key, value in cursor:
        if not key.startswith(prefix):
            return
        yield key, value


def term_docs(txn: Txn, db: Database, index_id: int, term: str, fields: set[int] | None) -> BitMap:
    """Documents having exactly ``term`` in any of ``fields`` (every field when None)."""
    start = index_prefix(index_id) + term.encode() + _SEPARATOR
    found = BitMap()
    for key, value in scan(txn, db, start):
        if fields is None or _FIELD.unpack(key[-2:])[0] in fields:
            found |= decode_bitmap(value)
    return found


class PostingsDelta:
    """Pending changes to one postings database, merged into the store by ``flush``.

    Removals are applied before additions, which is right for a document removed then re-added (an
    update); the caller flushes before removing a document it added since the last flush.
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        self._added: dict[TermKey, list[int]] = {}
        self._removed: dict[TermKey, list[int]] = {}

    def add(self, keys: Iterable[TermKey], doc_id: int) -> None:
        _record(self._added, keys, doc_id)

    def remove(self, keys: Iterable[TermKey], doc_id: int) -> None:
        _record(self._removed, keys, doc_id)

    def flush(self, txn: Txn) -> None:
        """Sorted key order makes the B-tree writes sequential."""
        added, removed = self._added, self._removed
        appender = Appender(txn, self.db)
        for key in sorted(added.keys() | removed.keys()):
            stored = txn.get(key, db=self.db) if appender.may_exist(key) else None
            bitmap = decode_bitmap(stored) if stored is not None else BitMap()
            gone = removed.get(key)
            if gone:
                bitmap -= BitMap(gone)
            new = added.get(key)
            if new:
                bitmap.update(new)
            if bitmap:
                appender.put(key, encode_bitmap(bitmap))
            elif stored is not None:
                txn.delete(key, db=self.db)
        added.clear()
        removed.clear()


class Appender:
    """Writes keys given in ascending order, appending those past the database's last key.

    LMDB splits a full page in half, so keys inserted one by one at the end of a B-tree leave every
    page half empty; appending fills pages completely. A first load of an index (the common bulk
    case) is all appends, since a new index has the highest id prefix.
    """

    def __init__(self, txn: Txn, db: Database) -> None:
        self.txn = txn
        self.db = db
        cursor = txn.cursor(db)
        self._last: bytes | None = cursor.key() if cursor.last() else None

    def may_exist(self, key: bytes) -> bool:
        return self._last is not None and key <= self._last

    def put(self, key: bytes, value: bytes) -> None:
        if self.may_exist(key):
            self.txn.put(key, value, db=self.db)
        else:
            self.txn.put(key, value, db=self.db, append=True)
            self._last = key


def _record(pending: dict[TermKey, list[int]], keys: Iterable[TermKey], doc_id: int) -> None:
    for key in keys:
        ids = pending.get(key)
        if ids is None:
            pending[key] = [doc_id]
        else:
            ids.append(doc_id)


class Deltas:
    """The batch's pending postings changes, one per postings database (facet values included).

    Flushed every ``FLUSH_DOCUMENTS`` documents to bound memory, and before removing a document added
    since the last flush, so that each flush only ever removes then adds a document's keys.
    """

    FLUSH_DOCUMENTS = 10_000

    def __init__(
        self, txn: Txn, words: Database, prefixes: Database, stems: Database, facets: Database
    ) -> None:
        self.txn = txn
        self.words = PostingsDelta(words)
        self.prefixes = PostingsDelta(prefixes)
        self.stems = PostingsDelta(stems)
        self.facets = PostingsDelta(facets)
        self._added: set[int] = set()

    def adding(self, doc_id: int) -> None:
        if len(self._added) >= self.FLUSH_DOCUMENTS:
            self.flush()
        self._added.add(doc_id)

    def removing(self, doc_id: int) -> None:
        if doc_id in self._added:
            self.flush()

    def flush(self) -> None:
        for delta in (self.words, self.prefixes, self.stems, self.facets):
            delta.flush(self.txn)
        self._added.clear()
