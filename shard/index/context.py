"""The per-batch write context: the one write transaction and everything a document-level step needs.

Every change a batch makes goes through a ``WriteContext`` so that later concerns (postings, facet
columns) join the same transaction by taking it as an argument, and are wiped with an index by
registering their databases in ``StoreEnv.per_index``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from common.documents.geojson import uses_geojson
from shard.index.blocks import BlockWriter
from shard.index.codec import DocumentCodec
from shard.index.env import Database, StoreEnv, Txn, index_prefix
from shard.index.facet_keys import field_prefix
from shard.index.facet_rules import FacetedFields
from shard.index.facets import FacetIndexer
from shard.index.fields import KnownFields, load_fields, save_fields
from shard.index.indexer import Indexer
from shard.index.postings import Deltas
from shard.index.record_store import RecordWriter
from shard.index.settings import load_settings
from shard.index.shapes import ShapeWriter
from shard.index.state import IndexState, load_state, save_state

# How many documents may be processed between two calls of ``should_abort``.
ABORT_CHECK_INTERVAL = 1000


class BatchAborted(Exception):
    """The batch was cancelled part way; its transaction was aborted and nothing was written."""


class WriteContext:
    def __init__(
        self, env: StoreEnv, codec: DocumentCodec, txn: Txn, should_abort: Callable[[], bool]
    ) -> None:
        self.env = env
        self.codec = codec
        self.txn = txn
        self._should_abort = should_abort
        self._since_check = 0
        self._states: dict[int, IndexState] = {}
        self._indexers: dict[int, Indexer] = {}
        self._facet_indexers: dict[int, FacetIndexer] = {}
        self._fields: dict[int, KnownFields] = {}
        self.deltas = Deltas(txn, env.words, env.prefixes, env.stems, env.impacts, env.facets)
        self.documents = BlockWriter(txn, env.documents, codec)
        self.records = RecordWriter(txn, env, codec)
        self.on_delete: list[Callable[[int, int], None]] = []
        """Called with (index id, doc id) for every document deleted (not replaced): concerns stored
        beside documents (vectors) drop theirs."""

    def state(self, index_id: int) -> IndexState:
        """The index's bookkeeping, loaded on first use and saved by ``flush``."""
        state = self._states.get(index_id)
        if state is None:
            state = self._states[index_id] = load_state(self.env, self.txn, index_id)
        return state

    def fields(self, index_id: int) -> KnownFields:
        """The index's field paths, loaded on first use and saved by ``flush``."""
        known = self._fields.get(index_id)
        if known is None:
            known = self._fields[index_id] = load_fields(self.env, self.codec, self.txn, index_id)
        return known

    def indexer(self, index_id: int) -> Indexer:
        """The index's indexer for this batch, built from its stored settings on first use."""
        indexer = self._indexers.get(index_id)
        if indexer is None:
            settings = load_settings(self.env, self.txn, index_id)
            indexer = Indexer(index_id, settings, self.deltas, self.records)
            self._indexers[index_id] = indexer
        return indexer

    def facet_indexer(self, index_id: int) -> FacetIndexer:
        """The index's facet indexer for this batch, built from its stored settings on first use."""
        indexer = self._facet_indexers.get(index_id)
        if indexer is None:
            settings = load_settings(self.env, self.txn, index_id)
            shapes = ShapeWriter(self.txn, self.env.shapes, index_id) if uses_geojson(settings) else None
            indexer = FacetIndexer(index_id, FacetedFields(settings), self.deltas, shapes)
            self._facet_indexers[index_id] = indexer
        return indexer

    def forget_indexer(self, index_id: int) -> None:
        """The index's settings changed: the next document is indexed with the new ones."""
        self._indexers.pop(index_id, None)
        self._facet_indexers.pop(index_id, None)

    def check_abort(self) -> None:
        self._since_check = 0
        if self._should_abort():
            raise BatchAborted

    def tick(self) -> None:
        """Count one document of work; checks for cancellation every ``ABORT_CHECK_INTERVAL``."""
        self._since_check += 1
        if self._since_check >= ABORT_CHECK_INTERVAL:
            self.check_abort()

    def wipe_index(self, index_id: int, *, keep_fields: bool) -> int:
        """Delete the index's documents and all data derived from them; returns how many documents it had.

        Pending postings changes are flushed first so that none of them lands after the wipe.
        ``keep_fields``: the index lives on (its documents are cleared), so its field paths stay listed.
        """
        removed = len(self.state(index_id).live)
        kept = self.fields(index_id) if keep_fields else None
        self._fields.pop(index_id, None)
        self.deltas.flush()
        self.documents.forget(index_id)
        self.records.forget(index_id)
        self._wipe(index_id, self.env.per_index)
        self._states[index_id] = IndexState()
        if kept is not None:
            kept.dirty = True  # the wipe deleted its record with the rest
            self._fields[index_id] = kept
        return removed

    def wipe_searchable(self, index_id: int) -> None:
        """Delete the index's postings and token records, keeping its documents (before a rebuild)."""
        self.deltas.flush()
        self.records.forget(index_id)
        self._wipe(index_id, self.env.searchable)
        state = self.state(index_id)
        self._states[index_id] = replace(state, field_names=[], field_tokens=[])

    def drop_facet_fields(self, index_id: int, field_ids: list[int]) -> None:
        """Delete the facet values of these fields (no longer faceted), keeping their ids registered."""
        self.deltas.flush()
        prefix = index_prefix(index_id)
        for field_id in field_ids:
            self._delete_prefixed(field_prefix(prefix, field_id), self.env.facets)

    def wipe_shapes(self, index_id: int) -> None:
        """Delete the index's ``_geojson`` shapes (no longer filterable)."""
        self._wipe(index_id, (self.env.shapes,))

    def _wipe(self, index_id: int, databases: tuple[Database, ...]) -> None:
        for db in databases:
            self._delete_prefixed(index_prefix(index_id), db)

    def _delete_prefixed(self, prefix: bytes, db: Database) -> None:
        cursor = self.txn.cursor(db)
        positioned = cursor.set_range(prefix)
        while positioned and cursor.key().startswith(prefix):
            self.tick()
            positioned = cursor.delete()

    def flush(self) -> None:
        self.deltas.flush()
        self.documents.flush()
        self.records.flush()
        for index_id, state in self._states.items():
            save_state(self.env, self.txn, index_id, state)
        for index_id, known in self._fields.items():
            save_fields(self.env, self.txn, index_id, known)
