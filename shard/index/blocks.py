"""Stored documents in compressed blocks of 32 consecutive internal ids, like Lucene's stored fields.

One LMDB value per document wastes about 40% of each page on values of 1-3 KB (half-filled leaves
and whole overflow pages), and per-document zstd cannot share the field names and vocabulary that
neighbouring documents repeat. Blocks fix both: the movies dataset stores in about half the bytes.
A block is ``32 value lengths + the concatenated values``, compressed as one zstd frame; reading
one value decompresses its block (tens of microseconds) and slices it, without parsing neighbours.
A search reads the documents of its page only; token records, read by ranking for scattered
documents, are stored one per document instead (record_store.py).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from shard.index.codec import DocumentCodec
from shard.index.env import Database, Txn, index_prefix
from shard.index.postings import Appender

BLOCK_SIZE = 32
# Each slot's value length, or -1 when the id holds no value.
_LENGTHS = struct.Struct(f">{BLOCK_SIZE}i")
_ABSENT = -1
_BLOCK_ID = struct.Struct(">I")
# A batch keeps at most this many decoded blocks before writing them back, to bound its memory.
_MAX_CACHED_BLOCKS = 512

Slots = list[bytes | None]


def block_key(index_id: int, doc_id: int) -> bytes:
    return index_prefix(index_id) + _BLOCK_ID.pack(doc_id // BLOCK_SIZE)


def pack_block(codec: DocumentCodec, slots: Slots) -> bytes:
    lengths = [_ABSENT if value is None else len(value) for value in slots]
    return codec.compress(_LENGTHS.pack(*lengths) + b"".join(value for value in slots if value is not None))


def unpack_block(codec: DocumentCodec, data: bytes) -> Slots:
    raw = codec.decompress(data)
    slots: Slots = []
    start = _LENGTHS.size
    for length in _LENGTHS.unpack_from(raw):
        if length == _ABSENT:
            slots.append(None)
        else:
            slots.append(raw[start : start + length])
            start += length
    return slots


def read_value(txn: Txn, db: Database, codec: DocumentCodec, index_id: int, doc_id: int) -> bytes | None:
    stored = txn.get(block_key(index_id, doc_id), db=db)
    if stored is None:
        return None
    return unpack_block(codec, stored)[doc_id % BLOCK_SIZE]


def iter_values(
    txn: Txn, db: Database, codec: DocumentCodec, index_id: int, from_doc_id: int = 0
) -> Iterator[tuple[int, bytes]]:
    """(doc id, value) of every stored value at or after ``from_doc_id``, in id order."""
    prefix = index_prefix(index_id)
    cursor = txn.cursor(db)
    positioned = cursor.set_range(block_key(index_id, from_doc_id))
    while positioned and cursor.key().startswith(prefix):
        first = _BLOCK_ID.unpack(cursor.key()[4:])[0] * BLOCK_SIZE
        for slot, value in enumerate(unpack_block(codec, cursor.value())):
            if value is not None and first + slot >= from_doc_id:
                yield first + slot, value
        positioned = cursor.next()


class BlockWriter:
    """A batch's view of one block database: reads through, writes back on ``flush``."""

    def __init__(self, txn: Txn, db: Database, codec: DocumentCodec) -> None:
        self.txn = txn
        self.db = db
        self.codec = codec
        self._blocks: dict[bytes, Slots] = {}
        self._dirty: set[bytes] = set()

    def put(self, index_id: int, doc_id: int, value: bytes) -> None:
        key = block_key(index_id, doc_id)
        self._slots(key)[doc_id % BLOCK_SIZE] = value
        self._dirty.add(key)

    def get(self, index_id: int, doc_id: int) -> bytes | None:
        """The document's value as the batch has it so far."""
        return self._slots(block_key(index_id, doc_id))[doc_id % BLOCK_SIZE]

    def pop(self, index_id: int, doc_id: int) -> bytes | None:
        key = block_key(index_id, doc_id)
        slots = self._slots(key)
        value = slots[doc_id % BLOCK_SIZE]
        if value is not None:
            slots[doc_id % BLOCK_SIZE] = None
            self._dirty.add(key)
        return value

    def forget(self, index_id: int) -> None:
        """Drop cached blocks of an index whose keys were just deleted from the database."""
        prefix = index_prefix(index_id)
        for key in [key for key in self._blocks if key.startswith(prefix)]:
            del self._blocks[key]
            self._dirty.discard(key)

    def flush(self) -> None:
        appender = Appender(self.txn, self.db)
        for key in sorted(self._dirty):
            slots = self._blocks[key]
            if any(value is not None for value in slots):
                appender.put(key, pack_block(self.codec, slots))
            else:
                self.txn.delete(key, db=self.db)
        self._dirty.clear()
        self._blocks.clear()

    def _slots(self, key: bytes) -> Slots:
        slots = self._blocks.get(key)
        if slots is None:
            if len(self._blocks) >= _MAX_CACHED_BLOCKS:
                self.flush()
            stored = self.txn.get(key, db=self.db)
            slots = unpack_block(self.codec, stored) if stored is not None else [None] * BLOCK_SIZE
            self._blocks[key] = slots
        return slots
