"""Applying one scheduler batch: every operation in a single write transaction that records its result.

Recording the result under the batch uid in the same transaction is what makes re-sending a batch
after a crash harmless: either the whole batch and its record are durable, or neither is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from common.documents.geojson import uses_geojson
from common.errors import ApiError
from common.timing import Steps, lap
from shard.filter.deletion import delete_by_filter
from shard.index import catalog
from shard.index.codec import DocumentCodec
from shard.index.context import WriteContext
from shard.index.documents import delete_documents, put_documents, reindex_documents
from shard.index.env import StoreEnv, Txn, batch_key
from shard.index.facet_rules import facet_change
from shard.index.settings import (
    delete_settings,
    load_settings,
    needs_rebuild,
    save_settings,
)
from shard.index.upgrade import upgrade_store
from shard.vector import VectorStore
from shard.vector.embedders import ShardEmbedding
from shard.vector.ingest import plan_documents, store_planned
from shard.vector.prepared import PreparedEmbeddings
from shard.vector.settings import change_embedders
from shard.vector.writer import VectorWriter

Operation = dict[str, Any]
BatchResult = dict[str, Any]


Hold = Callable[[BatchResult], bool]
"""Called with a prepared batch's result, its writes pending in the open transaction: returns whether
to commit them (the scheduler's decision) or roll them back."""


class BatchDropped(Exception):
    """A prepared batch was rolled back: the scheduler aborted it, or asked for other tasks skipped."""


def apply_batch(
    env: StoreEnv,
    codec: DocumentCodec,
    batch_uid: int,
    operations: list[Operation],
    should_abort: Callable[[], bool],
    steps: Steps | None = None,
    vectors: VectorStore | None = None,
    *,
    skip: frozenset[int] = frozenset(),
    embeddings: PreparedEmbeddings | None = None,
    hold: Hold | None = None,
) -> BatchResult:
    """Apply the operations in order, or return the recorded result if the batch was applied before.

    Any exception (including ``BatchAborted``) aborts the transaction, leaving the store unchanged.
    ``steps``: timed as the work goes (applying the operations, writing the changes, committing);
    a batch answered from its record did none of it and leaves them empty. ``vectors``: the shard's
    in-memory vector spaces, changed only once the transaction committed. ``skip``: the tasks whose
    operations are left out (they failed on some shard). ``embeddings``: the embedders' answers kept
    for this batch, used and completed (``vector/prepared.py``), saved before ``hold`` is called;
    with ``hold``, the batch is prepared and waits for its decision (``BatchDropped`` when dropped).
    """
    key = batch_key(batch_uid)
    with env.lmdb.begin(write=True) as txn:
        recorded = txn.get(key, db=env.batches)
        if recorded is not None:
            result: BatchResult = orjson.loads(recorded)
            return result
        ctx = WriteContext(env, codec, txn, should_abort)
        applier = _Applier(ctx, embeddings)
        if vectors is not None:
            vectors.trim(env, txn)
        for operation in operations:
            ctx.check_abort()
            if operation.get("task") in skip:
                applier.skip(operation)
            else:
                applier.apply(operation)
        result = applier.result()
        lap(steps, "applying operations")
        ctx.flush()
        applier.vectors.flush()
        txn.put(key, orjson.dumps(result), db=env.batches)
        lap(steps, "writing changes")
        if hold is not None:
            if embeddings is not None:
                embeddings.save()
            if not hold(result):
                raise BatchDropped
            if steps is not None:  # the wait for the decision is no step of this shard's
                steps = Steps(steps.durations, steps.prefix)
    lap(steps, "committing")
    if vectors is not None:
        vectors.after_commit(env, applier.vectors.changes)
        lap(steps, "updating vector indexes")
    return result


def recorded_result(env: StoreEnv, txn: Txn, batch_uid: int) -> BatchResult | None:
    recorded = txn.get(batch_key(batch_uid), db=env.batches)
    if recorded is None:
        return None
    result: BatchResult = orjson.loads(recorded)
    return result


class _Applier:
    """Dispatches operations and accumulates per-task counts across them."""

    def __init__(self, ctx: WriteContext, embeddings: PreparedEmbeddings | None = None) -> None:
        self.ctx = ctx
        self.env = ctx.env
        self.txn = ctx.txn
        self.tasks: dict[str, dict[str, Any]] = {}
        """Per-task counts, or the error of a task the shard refused."""
        self.touched: set[int] = set()
        self.vectors = VectorWriter(ctx)
        self.embedding = ShardEmbedding(ctx.check_abort, embeddings)
        self._handlers: dict[str, Callable[[Operation], None]] = {
            "createIndex": self._create_index,
            "deleteIndex": self._delete_index,
            "renameIndex": self._rename_index,
            "swapIndexes": self._swap_indexes,
            "addDocuments": self._add_documents,
            "deleteDocuments": self._delete_documents,
            "clearDocuments": self._clear_documents,
            "deleteByFilter": self._delete_by_filter,
            "updateSettings": self._update_settings,
            "upgradeStore": self._upgrade_store,
        }

    def apply(self, operation: Operation) -> None:
        handler = self._handlers.get(operation["op"])
        if handler is None:
            raise ValueError(f"unknown shard operation `{operation['op']}`")
        handler(operation)

    def skip(self, operation: Operation) -> None:
        """A skipped task's operation leaves what its failure would have: the index, created."""
        if operation["op"] in ("addDocuments", "updateSettings"):
            self.touched.add(catalog.ensure(self.env, self.txn, operation["index"]))

    def result(self) -> BatchResult:
        uids = catalog.uids_by_id(self.env, self.txn)
        indexes = {
            uids[index_id]: {"numberOfDocuments": len(self.ctx.state(index_id).live)}
            for index_id in sorted(self.touched)
            if index_id in uids
        }
        return {"tasks": self.tasks, "indexes": indexes}

    def _count(self, operation: Operation, *, indexed: int = 0, deleted: int = 0) -> None:
        counts = self.tasks.setdefault(str(operation["task"]), {"indexedDocuments": 0, "deletedDocuments": 0})
        counts["indexedDocuments"] += indexed
        counts["deletedDocuments"] += deleted

    def _create_index(self, operation: Operation) -> None:
        self.touched.add(catalog.ensure(self.env, self.txn, operation["index"]))

    def _delete_index(self, operation: Operation) -> None:
        index_id = catalog.remove(self.env, self.txn, operation["index"])
        removed = 0
        if index_id is not None:
            removed = self.ctx.wipe_index(index_id, keep_fields=False)
            self.vectors.wiped(index_id)
            delete_settings(self.env, self.txn, index_id)
            self.ctx.forget_indexer(index_id)
        self._count(operation, deleted=removed)

    def _rename_index(self, operation: Operation) -> None:
        catalog.rename(self.env, self.txn, operation["from"], operation["to"])

    def _swap_indexes(self, operation: Operation) -> None:
        catalog.swap(self.env, self.txn, operation["a"], operation["b"])

    def _add_documents(self, operation: Operation) -> None:
        mode = operation["mode"]
        if mode not in ("replace", "update"):
            raise ValueError(f"unknown document write mode `{mode}`")
        index_id = catalog.ensure(self.env, self.txn, operation["index"])
        self.touched.add(index_id)
        documents = operation["documents"]
        planned = None
        if self.vectors.embedders(index_id):
            try:
                planned = plan_documents(
                    self.vectors,
                    index_id,
                    operation["index"],
                    documents,
                    merge=mode == "update",
                    embedding=self.embedding,
                )
            except ApiError as error:  # bad vectors, or the embedder failed: nothing of the task is written
                self.tasks[str(operation["task"])] = {"error": error.to_dict()}
                return
            documents = [(item.external_id, item.document, item.position) for item in planned]
        written = put_documents(
            self.ctx,
            index_id,
            documents,
            task_uid=operation["task"],
            merge=mode == "update",
            skip_creation=bool(operation.get("skipCreation", False)),
        )
        if planned is not None:
            store_planned(self.vectors, index_id, planned)
        self._count(operation, indexed=written)

    def _delete_documents(self, operation: Operation) -> None:
        index_id = catalog.lookup(self.env, self.txn, operation["index"])
        deleted = 0
        if index_id is not None:
            self.touched.add(index_id)
            deleted = delete_documents(self.ctx, index_id, operation["ids"])
        self._count(operation, deleted=deleted)

    def _delete_by_filter(self, operation: Operation) -> None:
        """A filter the settings refuse fails its task alone, with the same error on every shard."""
        index_id = catalog.lookup(self.env, self.txn, operation["index"])
        deleted = 0
        if index_id is not None:
            self.touched.add(index_id)
            try:
                deleted = delete_by_filter(self.ctx, index_id, operation["index"], operation)
            except ApiError as error:
                self.tasks[str(operation["task"])] = {"error": error.to_dict()}
                return
        self._count(operation, deleted=deleted)

    def _clear_documents(self, operation: Operation) -> None:
        index_id = catalog.lookup(self.env, self.txn, operation["index"])
        deleted = 0
        if index_id is not None:
            self.touched.add(index_id)
            deleted = self.ctx.wipe_index(index_id, keep_fields=True)
            self.vectors.wiped(index_id)
        self._count(operation, deleted=deleted)

    def _upgrade_store(self, operation: Operation) -> None:
        self.tasks[str(operation["task"])] = {"upgradedFromFormat": upgrade_store(self.ctx)}

    def _update_settings(self, operation: Operation) -> None:
        """Store the index's new effective settings; rebuild searchable or facet data only if they
        shape it."""
        index_id = catalog.ensure(self.env, self.txn, operation["index"])
        self.touched.add(index_id)
        previous = load_settings(self.env, self.txn, index_id)
        settings = operation["settings"]
        try:  # embeds what the embedders' changes need before anything is written
            embedders = change_embedders(self.vectors, index_id, operation["index"], settings, self.embedding)
        except ApiError as error:
            self.tasks[str(operation["task"])] = {"error": error.to_dict()}
            return
        save_settings(self.env, self.txn, index_id, settings)
        self.ctx.forget_indexer(index_id)
        self.vectors.settings_changed(index_id)
        embedders.apply()
        searchable, facets = needs_rebuild(previous, settings), facet_change(previous, settings)
        shapes = uses_geojson(settings) if uses_geojson(settings) != uses_geojson(previous) else None
        if searchable or facets is not None or shapes is not None:
            reindex_documents(self.ctx, index_id, searchable=searchable, facets=facets, shapes=shapes)
