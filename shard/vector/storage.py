"""Vectors in the shard's LMDB environment: the authoritative copy, written in the batch's transaction.

Three tables, every key prefixed by the index id and the embedder's key (``space_key``):

- ``vectors``: per document, its embeddings for that embedder (``Entry``): float32 rows, or sign bits
  when the embedder is ``binaryQuantized``; whether they are user-provided (``regenerate: false``); and
  a short hash of the rendered document text they embed, so only documents whose text changed are
  embedded again.
- ``vector_spaces``: per embedder, its ``SpaceRecord``: dimensions, the count of embeddings, the
  documents holding at least one, and the store-wide vector generations it was created and last
  changed at.
- ``vector_journal``: per embedder and generation, the documents that batch changed, which a restart
  replays over the in-memory index's last checkpoint (``registry.py``).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from pyroaring import BitMap

from shard.index.env import StoreEnv, Txn, decode_u64, encode_u32, encode_u64, index_prefix

_ENTRY = struct.Struct(">B8sHH")
"""flags, text hash, embeddings (m), dimensions (d)"""
_USER = 1
_BINARY = 2
_SPACE = struct.Struct(">QQQIB")
"""base generation, last generation, embeddings, dimensions, flags"""
_GENERATION_KEY = b"vector-generation"
NO_HASH = b"\0" * 8


def space_key(index_id: int, embedder: str) -> bytes:
    """Index prefix, then the embedder's name with its length, so names never run into doc ids."""
    name = embedder.encode()
    return index_prefix(index_id) + struct.pack(">H", len(name)) + name


def text_hash(text: str) -> bytes:
    """8 bytes of BLAKE2b: enough to tell a changed text from an unchanged one."""
    return hashlib.blake2b(text.encode(), digest_size=8).digest()


@dataclass
class Entry:
    """One document's embeddings for one embedder, as given (not normalised): shape (m, d), m >= 0."""

    embeddings: np.ndarray
    user_provided: bool
    text_hash: bytes = NO_HASH

    @property
    def count(self) -> int:
        return int(self.embeddings.shape[0])

    @property
    def dimensions(self) -> int:
        return int(self.embeddings.shape[1]) if self.embeddings.ndim == 2 else 0


def encode_entry(entry: Entry, binary: bool) -> bytes:
    rows = np.ascontiguousarray(entry.embeddings, dtype=np.float32)
    m, d = rows.shape
    flags = (_USER if entry.user_provided else 0) | (_BINARY if binary else 0)
    data = np.packbits(rows > 0, axis=1).tobytes() if binary else rows.tobytes()
    return _ENTRY.pack(flags, entry.text_hash, m, d) + data


def decode_entry(value: bytes) -> Entry:
    flags, hashed, m, d = _ENTRY.unpack_from(value)
    data = memoryview(value)[_ENTRY.size :]
    if flags & _BINARY:
        bits = np.frombuffer(data, dtype=np.uint8).reshape(m, (d + 7) // 8)
        rows = np.unpackbits(bits, axis=1, count=d).astype(np.float32)  # 1 positive, 0 not (as shown)
    else:
        rows = np.frombuffer(data, dtype=np.float32).reshape(m, d).copy()
    return Entry(rows, bool(flags & _USER), hashed)


def entry_header(value: bytes) -> tuple[bytes, bool, int]:
    """The stored text hash, user-provided flag and embedding count, without decoding the embeddings."""
    flags, hashed, m, _ = _ENTRY.unpack_from(value)
    return hashed, bool(flags & _USER), m


@dataclass
class SpaceRecord:
    """An embedder's vectors in one index on this shard."""

    base: int
    """The vector generation this space started at (created, or recreated after a wipe)."""
    generation: int
    """The vector generation of its last change."""
    dimensions: int = 0
    binary: bool = False
    embeddings: int = 0
    documents: BitMap = field(default_factory=BitMap)
    """Documents holding at least one embedding."""


def load_space(env: StoreEnv, txn: Txn, index_id: int, embedder: str) -> SpaceRecord | None:
    value = txn.get(space_key(index_id, embedder), db=env.vector_spaces)
    return None if value is None else _decode_space(value)


def _decode_space(value: bytes) -> SpaceRecord:
    base, generation, embeddings, dimensions, flags = _SPACE.unpack_from(value)
    documents = BitMap.deserialize(value[_SPACE.size :])
    return SpaceRecord(base, generation, dimensions, bool(flags & _BINARY), embeddings, documents)


def save_space(env: StoreEnv, txn: Txn, index_id: int, embedder: str, space: SpaceRecord) -> None:
    flags = _BINARY if space.binary else 0
    header = _SPACE.pack(space.base, space.generation, space.embeddings, space.dimensions, flags)
    txn.put(space_key(index_id, embedder), header + space.documents.serialize(), db=env.vector_spaces)


def delete_space(env: StoreEnv, txn: Txn, index_id: int, embedder: str) -> None:
    """Drop the embedder's vectors, record and journal (the embedder was removed)."""
    prefix = space_key(index_id, embedder)
    txn.delete(prefix, db=env.vector_spaces)
    for db in (env.vectors, env.vector_journal):
        cursor = txn.cursor(db)
        positioned = cursor.set_range(prefix)
        while positioned and cursor.key().startswith(prefix):
            positioned = cursor.delete()


def spaces(env: StoreEnv, txn: Txn, index_id: int | None = None) -> Iterator[tuple[int, str, SpaceRecord]]:
    """Every vector space of the store, or of one index: ``(index id, embedder name, record)``."""
    prefix = b"" if index_id is None else index_prefix(index_id)
    cursor = txn.cursor(env.vector_spaces)
    positioned = cursor.set_range(prefix)
    while positioned and cursor.key().startswith(prefix):
        key = cursor.key()
        yield int.from_bytes(key[:4], "big"), key[6:].decode(), _decode_space(cursor.value())
        positioned = cursor.next()


def entry_key(index_id: int, embedder: str, doc_id: int) -> bytes:
    return space_key(index_id, embedder) + encode_u32(doc_id)


def get_entry(env: StoreEnv, txn: Txn, index_id: int, embedder: str, doc_id: int) -> Entry | None:
    value = txn.get(entry_key(index_id, embedder, doc_id), db=env.vectors)
    return None if value is None else decode_entry(value)


def iter_entries(env: StoreEnv, txn: Txn, index_id: int, embedder: str) -> Iterator[tuple[int, bytes]]:
    """``(doc id, encoded entry)`` of every document holding an entry, in doc id order."""
    prefix = space_key(index_id, embedder)
    cursor = txn.cursor(env.vectors)
    positioned = cursor.set_range(prefix)
    while positioned:
        key = cursor.key()
        if not key.startswith(prefix):
            return
        yield int.from_bytes(key[len(prefix) :], "big"), cursor.value()
        positioned = cursor.next()


def next_generation(env: StoreEnv, txn: Txn) -> int:
    """The store-wide vector generation of this batch (one more than the last batch's); never reset,
    so a checkpoint taken before an index was wiped can never pass for a later state."""
    stored = txn.get(_GENERATION_KEY, db=env.meta)
    generation = (decode_u64(stored) if stored is not None else 0) + 1
    txn.put(_GENERATION_KEY, encode_u64(generation), db=env.meta)
    return generation


def journal_key(index_id: int, embedder: str, generation: int) -> bytes:
    return space_key(index_id, embedder) + encode_u64(generation)


def write_journal(
    env: StoreEnv, txn: Txn, index_id: int, embedder: str, generation: int, docs: BitMap
) -> None:
    txn.put(journal_key(index_id, embedder, generation), docs.serialize(), db=env.vector_journal)


def read_journal(env: StoreEnv, txn: Txn, index_id: int, embedder: str, after: int) -> BitMap:
    """The documents changed by every generation after ``after``."""
    changed = BitMap()
    prefix = space_key(index_id, embedder)
    cursor = txn.cursor(env.vector_journal)
    positioned = cursor.set_range(journal_key(index_id, embedder, after + 1))
    while positioned and cursor.key().startswith(prefix):
        changed |= BitMap.deserialize(cursor.value())
        positioned = cursor.next()
    return changed


def trim_journal(env: StoreEnv, txn: Txn, index_id: int, embedder: str, upto: int) -> None:
    """Drop journal entries up to generation ``upto`` (a checkpoint holds them)."""
    prefix = space_key(index_id, embedder)
    end = journal_key(index_id, embedder, upto + 1)
    cursor = txn.cursor(env.vector_journal)
    positioned = cursor.set_range(prefix)
    while positioned and cursor.key() < end:
        positioned = cursor.delete()
