"""Token records stored one per document, each compressed against a dictionary trained per index.

Ranking reads the records of the documents in the buckets it splits, which on a large index are a few
hundred documents scattered over the whole id range: with records packed in blocks of neighbours, each
read decompressed 32 records to use one. A zstd dictionary trained on the index's own records gives a
single record about the ratio of the block (the dictionary holds what neighbours used to share: field
layout and frequent words), and decompressing one record alone is ~20x cheaper than a block.

The dictionary is trained from the first batch that writes enough records and never changes after, so a
record's one-byte header (plain or with the dictionary) is all a reader needs besides the index's
dictionary. Its id is random, so a decompressor cached by id (``DocumentCodec.decompress_with``) can never
be the one of a wiped and retrained index.
"""

from __future__ import annotations

import os
import random

import zstandard

from shard.index.codec import LEVEL, DocumentCodec
from shard.index.env import Database, StoreEnv, Txn, index_prefix
from shard.index.postings import Appender

_PLAIN, _WITH_DICTIONARY = b"\x00", b"\x01"
_DICTIONARY_ID = b"record-dictionary-id"
_DICTIONARY = b"record-dictionary"
TRAINING_MIN_RECORDS = 256
"""Fewer records than this teach zstd little; those are stored without a dictionary."""
_TRAINING_SAMPLE = 4096
_DICTIONARY_BYTES = 16 << 10
_MAX_PENDING = 16384
"""Records a batch holds before compressing and writing them, to bound its memory."""


def record_key(index_id: int, doc_id: int) -> bytes:
    return index_prefix(index_id) + doc_id.to_bytes(4, "big")


def dictionary_id(env: StoreEnv, txn: Txn, index_id: int) -> bytes | None:
    """The index's dictionary id, or None while its records are stored without one."""
    return txn.get(index_prefix(index_id) + _DICTIONARY_ID, db=env.index_state)


def read_record(
    env: StoreEnv, txn: Txn, codec: DocumentCodec, index_id: int, doc_id: int, dictionary: bytes | None
) -> bytes | None:
    """The document's raw record; ``dictionary`` is the index's ``dictionary_id``."""
    stored = txn.get(record_key(index_id, doc_id), db=env.records)
    if stored is None:
        return None
    if stored[:1] == _PLAIN:
        return codec.decompress(stored[1:])
    assert dictionary is not None, "a record compressed with a dictionary its index lacks"
    return codec.decompress_with(dictionary, stored[1:], lambda: _stored_dictionary(env, txn, index_id))


def _stored_dictionary(env: StoreEnv, txn: Txn, index_id: int) -> bytes:
    data = txn.get(index_prefix(index_id) + _DICTIONARY, db=env.index_state)
    assert data is not None, "a dictionary id without its dictionary"
    return data


class RecordWriter:
    """A batch's view of the records database: reads through, compresses and writes on ``flush``."""

    def __init__(self, txn: Txn, env: StoreEnv, codec: DocumentCodec) -> None:
        self.txn = txn
        self.env = env
        self.db: Database = env.records
        self.codec = codec
        self._pending: dict[tuple[int, int], bytes | None] = {}
        self._compressors: dict[int, tuple[bytes, zstandard.ZstdCompressor]] = {}
        self._dictionary_ids: dict[int, bytes | None] = {}
        """Read once per index between flushes (a flush may train one)."""

    def put(self, index_id: int, doc_id: int, value: bytes) -> None:
        if len(self._pending) >= _MAX_PENDING:
            self.flush()
        self._pending[(index_id, doc_id)] = value

    def pop(self, index_id: int, doc_id: int) -> bytes | None:
        key = (index_id, doc_id)
        if key in self._pending:
            value = self._pending[key]
        else:
            if index_id not in self._dictionary_ids:
                self._dictionary_ids[index_id] = dictionary_id(self.env, self.txn, index_id)
            dictionary = self._dictionary_ids[index_id]
            value = read_record(self.env, self.txn, self.codec, index_id, doc_id, dictionary)
            if len(self._pending) >= _MAX_PENDING:
                self.flush()
        self._pending[key] = None
        return value

    def forget(self, index_id: int) -> None:
        """Drop pending records of an index whose keys (and dictionary) were just deleted."""
        for key in [key for key in self._pending if key[0] == index_id]:
            del self._pending[key]
        self._compressors.pop(index_id, None)
        self._dictionary_ids.pop(index_id, None)

    def flush(self) -> None:
        appender = Appender(self.txn, self.db)
        for index_id, doc_id in sorted(self._pending):
            value = self._pending[(index_id, doc_id)]
            key = record_key(index_id, doc_id)
            if value is None:
                self.txn.delete(key, db=self.db)
                continue
            header, compressor = self._compressor(index_id)
            appender.put(key, header + compressor.compress(value))
        self._pending.clear()
        self._dictionary_ids.clear()

    def _compressor(self, index_id: int) -> tuple[bytes, zstandard.ZstdCompressor]:
        found = self._compressors.get(index_id)
        if found is None:
            data = self._dictionary(index_id)
            if data is None:
                found = (_PLAIN, zstandard.ZstdCompressor(level=LEVEL))
            else:
                found = (_WITH_DICTIONARY, zstandard.ZstdCompressor(level=LEVEL, dict_data=data))
            self._compressors[index_id] = found
        return found

    def _dictionary(self, index_id: int) -> zstandard.ZstdCompressionDict | None:
        """The index's dictionary; trained now from this batch's records if it has none and enough."""
        state = self.env.index_state
        if dictionary_id(self.env, self.txn, index_id) is not None:
            return zstandard.ZstdCompressionDict(_stored_dictionary(self.env, self.txn, index_id))
        samples: list[bytes | bytearray | memoryview] = [
            value for (owner, _), value in self._pending.items() if owner == index_id and value
        ]
        if len(samples) < TRAINING_MIN_RECORDS:
            return None
        if len(samples) > _TRAINING_SAMPLE:
            samples = random.Random(index_id).sample(samples, _TRAINING_SAMPLE)
        size = min(_DICTIONARY_BYTES, max(1024, sum(map(len, samples)) // 10))
        try:
            trained = zstandard.train_dictionary(size, samples, level=LEVEL)
        except zstandard.ZstdError:
            return None  # too little variety to train on: plain records, and another try next batch
        self.txn.put(index_prefix(index_id) + _DICTIONARY, trained.as_bytes(), db=state)
        self.txn.put(index_prefix(index_id) + _DICTIONARY_ID, os.urandom(8), db=state)
        return trained
