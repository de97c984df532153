"""A batch's vector writes: entries, space records and the journal, in the batch's one transaction.

The ``VectorChanges`` it gathers are applied to the in-memory spaces only after the commit
(``registry.VectorStore.after_commit``).
"""

from __future__ import annotations

from typing import Any

from shard.index.context import WriteContext
from shard.index.settings import load_settings
from shard.vector.registry import SpaceId, VectorChanges
from shard.vector.storage import (
    Entry,
    SpaceRecord,
    decode_entry,
    delete_space,
    encode_entry,
    entry_header,
    entry_key,
    load_space,
    next_generation,
    save_space,
    write_journal,
)

Embedders = dict[str, dict[str, Any]]


class VectorWriter:
    def __init__(self, ctx: WriteContext) -> None:
        self.ctx = ctx
        self.env = ctx.env
        self.txn = ctx.txn
        self.changes = VectorChanges()
        self._records: dict[SpaceId, SpaceRecord | None] = {}
        self._embedders: dict[int, Embedders] = {}
        ctx.on_delete.append(self.remove_document)

    def embedders(self, index_id: int) -> Embedders:
        """The index's embedders (resolved settings), read once per batch and settings change."""
        found = self._embedders.get(index_id)
        if found is None:
            found = load_settings(self.env, self.txn, index_id).get("embedders") or {}
            self._embedders[index_id] = found
        return found

    def settings_changed(self, index_id: int) -> None:
        self._embedders.pop(index_id, None)

    def generation(self) -> int:
        """This batch's vector generation, allocated by its first vector change."""
        if not self.changes.generation:
            self.changes.generation = next_generation(self.env, self.txn)
        return self.changes.generation

    def record(self, key: SpaceId) -> SpaceRecord | None:
        if key not in self._records:
            self._records[key] = load_space(self.env, self.txn, key[0], key[1])
        return self._records[key]

    def stored(self, key: SpaceId, doc_id: int) -> Entry | None:
        value = self.txn.get(entry_key(key[0], key[1], doc_id), db=self.env.vectors)
        return None if value is None else decode_entry(value)

    def stored_header(self, key: SpaceId, doc_id: int) -> tuple[bytes, bool, int] | None:
        """The stored entry's text hash, user-provided flag and count, without decoding it."""
        value = self.txn.get(entry_key(key[0], key[1], doc_id), db=self.env.vectors)
        return None if value is None else entry_header(value)

    def put(self, key: SpaceId, doc_id: int, entry: Entry, binary: bool) -> None:
        record = self.record(key)
        if record is None:
            generation = self.generation()
            record = self._records[key] = SpaceRecord(generation, generation, entry.dimensions, binary)
        if entry.count and record.dimensions and entry.dimensions != record.dimensions:
            # Ingestion checks dimensions and settings changes start a resized space again, so this
            # would be a bug: abort the batch rather than store rows the space cannot hold.
            raise ValueError(f"{entry.dimensions}-d embeddings for the {record.dimensions}-d space {key}")
        self._forget(key, record, doc_id)
        value = encode_entry(entry, record.binary)
        self.txn.put(entry_key(key[0], key[1], doc_id), value, db=self.env.vectors)
        if entry.count:
            record.embeddings += entry.count
            record.documents.add(doc_id)
            record.dimensions = record.dimensions or entry.dimensions
        self._touch(key, record, doc_id)

    def delete(self, key: SpaceId, doc_id: int) -> None:
        record = self.record(key)
        if record is not None and self._forget(key, record, doc_id):
            self._touch(key, record, doc_id)

    def remove_document(self, index_id: int, doc_id: int) -> None:
        """A deleted document loses its vectors in every embedder of its index."""
        for name in self.embedders(index_id):
            self.delete((index_id, name), doc_id)

    def wiped(self, index_id: int) -> None:
        """The index's vector tables were deleted with its documents (``WriteContext.wipe_index``)."""
        for key in [key for key in self._records if key[0] == index_id]:
            del self._records[key]
            self.changes.reset.add(key)
        for name in self.embedders(index_id):
            self.changes.reset.add((index_id, name))
        self._embedders.pop(index_id, None)

    def drop(self, key: SpaceId) -> None:
        """The embedder was removed: its vectors go."""
        delete_space(self.env, self.txn, key[0], key[1])
        self._records[key] = None
        self.changes.reset.add(key)

    def _forget(self, key: SpaceId, record: SpaceRecord, doc_id: int) -> bool:
        """Delete the document's entry and its counts; whether it had one."""
        value = self.txn.pop(entry_key(key[0], key[1], doc_id), db=self.env.vectors)
        if value is None:
            return False
        count = entry_header(value)[2]
        if count:
            record.embeddings -= count
            record.documents.discard(doc_id)
        return True

    def _touch(self, key: SpaceId, record: SpaceRecord, doc_id: int) -> None:
        record.generation = self.generation()
        self.changes.touch(key, doc_id)

    def flush(self) -> None:
        """Save the changed space records and journal their changed documents (before the commit)."""
        for key, docs in self.changes.changed.items():
            record = self._records.get(key)
            if record is None:
                continue
            save_space(self.env, self.txn, key[0], key[1], record)
            write_journal(self.env, self.txn, key[0], key[1], self.generation(), docs)
