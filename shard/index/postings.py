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
from collections import defaultdict
from collections.abc import Iterable, Iterator

from pyroaring import BitMap

from shard.index.env import Database, Txn, index_prefix

_FIELD = struct.Struct(">H")
_LENGTH = struct.Struct(">I")
_SEPARATOR = b"\x00"
# Bitmaps of at most this many ids are stored as a plain sorted array (u16 when every id fits): most
# words of a vocabulary occur in a handful of documents, and roaring's headers would double their size.
_ARRAY_MAX = 8
_ARRAY_TAG = 0x00
_ROARING_TAG = 0x01
_SHORT_TAG = 0x02
_CODEC_BITS = 0x0F
_ARRAY_HEAD, _ROARING_HEAD, _SHORT_HEAD = (bytes((tag,)) for tag in (_ARRAY_TAG, _ROARING_TAG, _SHORT_TAG))
START, WHOLE = 1, 2
"""Marks of a term in a field, kept beside its documents so that the word position and exactness rules
split large buckets with bitmaps: START, the field's first word is at position 0 and is (or, in the
prefixes table, starts with; in the stems table, stems to) the term; WHOLE (words table only), the
field is that one word."""

# The high nibble of a value's first byte says where its marks are. Most terms of most fields are
# marked for all or none of their documents (an id, a country code, a one-word name), which costs
# nothing; the others carry their marked documents after the documents, length-prefixed.
_UNMARKED = 0x00
"""No document marked (and every facet value)."""
_ALL_MARKED = 0x10
"""Every document marked START and WHOLE."""
_STARTS_ONLY = 0x20
"""Every document marked START, none WHOLE."""
_STARTS_ALL = 0x30
"""Every document marked START; WHOLE documents follow."""
_MARKED = 0x40
"""START then WHOLE documents follow."""

_UNIFORM = {_UNMARKED: 0, _ALL_MARKED: START | WHOLE, _STARTS_ONLY: START}
"""The kinds whose documents are all marked alike, and their marks."""
_KIND_OF = {marks: kind for kind, marks in _UNIFORM.items()}

TermKey = bytes
"""A full postings key: index prefix, term, separator, field id."""


def encode_bitmap(bitmap: BitMap) -> bytes:
    count = len(bitmap)
    if count <= _ARRAY_MAX:
        if not count or bitmap.max() <= 0xFFFF:
            return _SHORT_HEAD + struct.pack(f">{count}H", *bitmap)
        return _ARRAY_HEAD + struct.pack(f">{count}I", *bitmap)
    bitmap.run_optimize()
    return _ROARING_HEAD + bitmap.serialize()


def decode_bitmap(data: bytes) -> BitMap:
    """The documents of a value, whatever marks follow them."""
    head = data[0]
    if head >= _STARTS_ALL:  # length-prefixed
        (length,) = _LENGTH.unpack_from(data, 1)
        return _decode(data[5 : 5 + length])
    return _decode(data, head & _CODEC_BITS)


def _decode(data: bytes, tag: int | None = None) -> BitMap:
    if tag is None:
        tag = data[0]
    if tag == _SHORT_TAG:
        return BitMap(struct.unpack(f">{(len(data) - 1) // 2}H", data[1:]))
    if tag == _ARRAY_TAG:
        return BitMap(struct.unpack(f">{(len(data) - 1) // 4}I", data[1:]))
    return BitMap.deserialize(data[1:])


def encode_marked(docs: BitMap, starts: BitMap, whole: BitMap) -> bytes:
    """A value holding ``docs`` and, of them, those marked START and WHOLE."""
    if not starts and not whole:
        return encode_bitmap(docs)
    if starts == docs:
        if whole == docs or not whole:
            encoded = encode_bitmap(docs)
            return bytes((encoded[0] | (_ALL_MARKED if whole else _STARTS_ONLY),)) + encoded[1:]
        return _join(_STARTS_ALL, docs, whole)
    return _join(_MARKED, docs, starts, whole)


def _join(head: int, *bitmaps: BitMap) -> bytes:
    """Every bitmap but the last is length-prefixed."""
    parts = [bytes((head,))]
    for bitmap in bitmaps[:-1]:
        encoded = encode_bitmap(bitmap)
        parts.append(_LENGTH.pack(len(encoded)))
        parts.append(encoded)
    parts.append(encode_bitmap(bitmaps[-1]))
    return b"".join(parts)


def decode_marked(data: bytes, mark: int | None) -> BitMap:
    """The documents of a value (``mark`` None) or those of them marked ``mark``."""
    if mark is None:
        return decode_bitmap(data)
    head = data[0] & ~_CODEC_BITS
    if head == _UNMARKED:
        return BitMap()
    if head == _ALL_MARKED or (head == _STARTS_ONLY and mark == START):
        return _decode(data, data[0] & _CODEC_BITS)
    if head == _STARTS_ONLY:
        return BitMap()
    (length,) = _LENGTH.unpack_from(data, 1)
    offset = 5 + length
    if head == _STARTS_ALL:
        return _decode(data[5:offset]) if mark == START else _decode(data[offset:])
    (starts,) = _LENGTH.unpack_from(data, offset)
    if mark == START:
        return _decode(data[offset + 4 : offset + 4 + starts])
    return _decode(data[offset + 4 + starts :])


def decode_all(data: bytes) -> tuple[BitMap, BitMap, BitMap]:
    """Documents, START and WHOLE documents of a value (three distinct bitmaps, safe to update)."""
    docs = decode_bitmap(data)
    head = data[0] & ~_CODEC_BITS
    if head == _UNMARKED:
        return docs, BitMap(), BitMap()
    if head == _ALL_MARKED:
        return docs, BitMap(docs), BitMap(docs)
    if head == _STARTS_ONLY:
        return docs, BitMap(docs), BitMap()
    return docs, decode_marked(data, START), decode_marked(data, WHOLE)


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


def term_docs(
    txn: Txn, db: Database, index_id: int, term: str, fields: set[int] | None, mark: int | None = None
) -> BitMap:
    """Documents having exactly ``term`` in any of ``fields`` (every field when None); with ``mark``,
    only those where it is so marked in one of them."""
    start = index_prefix(index_id) + term.encode() + _SEPARATOR
    found = BitMap()
    for key, value in scan(txn, db, start):
        if fields is None or _FIELD.unpack(key[-2:])[0] in fields:
            found |= decode_bitmap(value) if mark is None else decode_marked(value, mark)
    return found


def term_docs_by_field(txn: Txn, db: Database, index_id: int, term: str) -> dict[int, BitMap]:
    """Documents having exactly ``term``, per field id: what a phrase check intersects field by field."""
    start = index_prefix(index_id) + term.encode() + _SEPARATOR
    return {_FIELD.unpack(key[-2:])[0]: decode_bitmap(value) for key, value in scan(txn, db, start)}


def prefix_docs(
    txn: Txn, db: Database, index_id: int, prefix: str, fields: set[int] | None, mark: int | None = None
) -> BitMap:
    """Documents having a term starting with ``prefix`` in any of ``fields`` (so marked, with ``mark``):
    one cursor pass over the prefix's key range."""
    found: list[BitMap] = []
    for key, value in scan(txn, db, index_prefix(index_id) + prefix.encode()):
        if fields is None or _FIELD.unpack(key[-2:])[0] in fields:
            found.append(decode_bitmap(value) if mark is None else decode_marked(value, mark))
    return BitMap.union(BitMap(), *found)


class PostingsDelta:
    """Pending changes to one postings database, merged into the store by ``flush``.

    Removals are applied before additions, which is right for a document removed then re-added (an
    update); the caller flushes before removing a document it added since the last flush. A removal
    takes the document out of the key's marks too, so only additions carry marks.
    """

    def __init__(self, db: Database, *, marked: bool = False) -> None:
        """``marked``: the values keep START and WHOLE marks (words, prefixes, stems; not facets)."""
        self.db = db
        self.marked = marked
        self._added: dict[TermKey, list[int]] = {}
        self._removed: dict[TermKey, list[int]] = {}
        self.marks: tuple[defaultdict[TermKey, list[int]], ...] = tuple(defaultdict(list) for _ in range(4))
        """``marks[m][key]``: the added documents ``key`` marks ``m`` (START, WHOLE or both; 0 unused),
        see ``Deltas.mark``."""

    def add(self, keys: Iterable[TermKey], doc_id: int) -> None:
        _record(self._added, keys, doc_id)

    def remove(self, keys: Iterable[TermKey], doc_id: int) -> None:
        _record(self._removed, keys, doc_id)

    def flush(self, txn: Txn) -> None:
        """Sorted key order makes the B-tree writes sequential."""
        if self.marked:
            self._flush_marked(txn)
            return
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

    def _flush_marked(self, txn: Txn) -> None:
        added, removed, marks = self._added, self._removed, self.marks
        appender = Appender(txn, self.db)
        for key in sorted(added.keys() | removed.keys()):
            stored = txn.get(key, db=self.db) if appender.may_exist(key) else None
            new = added.get(key, ())
            counts = [0, *(len(by_key.get(key, ())) for by_key in marks[1:])]
            gone = removed.get(key)
            # The common case keeps the value's kind: every document added (and stored) marked alike,
            # nothing removed.
            kind: int | None
            head: int | None
            if stored is None:
                kind = START | WHOLE if counts[3] else START if counts[1] else 0
                head = _KIND_OF.get(kind)
            else:
                head = stored[0] & ~_CODEC_BITS
                kind = _UNIFORM.get(head)
            alike = kind is not None and sum(counts) == counts[kind] == (len(new) if kind else 0)
            if alike and head is not None and not gone:
                docs = BitMap() if stored is None else decode_bitmap(stored)
                docs.update(new)
                encoded = encode_bitmap(docs)
                appender.put(key, bytes((encoded[0] | head,)) + encoded[1:] if head else encoded)
                continue
            if stored is None:
                docs, starts, whole = BitMap(), BitMap(), BitMap()
            else:
                docs, starts, whole = decode_all(stored)
            if gone:
                gone_set = BitMap(gone)
                docs -= gone_set
                starts -= gone_set
                whole -= gone_set
            docs.update(new)
            for marked in (START, START | WHOLE):
                starts.update(marks[marked].get(key, ()))
            for marked in (WHOLE, START | WHOLE):
                whole.update(marks[marked].get(key, ()))
            if docs:
                appender.put(key, encode_marked(docs, starts, whole))
            elif stored is not None:
                txn.delete(key, db=self.db)
        added.clear()
        removed.clear()
        for by_key in marks:
            by_key.clear()


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
        self,
        txn: Txn,
        words: Database,
        prefixes: Database,
        stems: Database,
        impacts: Database,
        facets: Database,
    ) -> None:
        self.txn = txn
        self.words = PostingsDelta(words, marked=True)
        self.prefixes = PostingsDelta(prefixes, marked=True)
        self.stems = PostingsDelta(stems, marked=True)
        self.impacts = PostingsDelta(impacts)
        self.facets = PostingsDelta(facets)
        self._added: set[int] = set()

    def adding(self, doc_id: int) -> None:
        if len(self._added) >= self.FLUSH_DOCUMENTS:
            self.flush()
        self._added.add(doc_id)

    def removing(self, doc_id: int) -> None:
        if doc_id in self._added:
            self.flush()

    def mark(
        self, doc_id: int, marks: int, word: TermKey, prefixes: list[TermKey], stem: list[TermKey]
    ) -> None:
        """``marks`` of a document's field on its first ``word``'s key, and START on the keys of its
        short ``prefixes`` and of its ``stem`` (none when the stem is a word of the field)."""
        self.words.marks[marks][word].append(doc_id)
        if marks & START:
            starting = self.prefixes.marks[START]
            for key in prefixes:
                starting[key].append(doc_id)
            for key in stem:
                self.stems.marks[START][key].append(doc_id)

    def flush(self) -> None:
        for delta in (self.words, self.prefixes, self.stems, self.impacts, self.facets):
            delta.flush(self.txn)
        self._added.clear()
