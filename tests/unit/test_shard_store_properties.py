"""Random batches of document writes leave the shard store equal to a plain-dict model of Meilisearch.

The model also allocates internal ids (one past the highest live id) and sequences (task uid and payload
position, kept by replacements), so listing order, the id mapping and "id order is sequence order" are
checked, and deleting everything must leave no key behind in any per-index database.
"""

from __future__ import annotations

import tempfile
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.index import BatchAborted, catalog
from shard.index.env import decode_u32, index_prefix
from shard.index.sequence import read_sequences
from shard.store import ShardStore

INDEXES = ("x", "y")
# Mostly one index, so that writes, deletes and re-allocations of ids meet within a batch.
indexes = st.sampled_from(["x", "x", "x", "y"])
Doc = dict[str, Any]
# index uid -> external id -> (internal id, sequence, document)
Model = dict[str, dict[str, tuple[int, int, Doc]]]

external_ids = st.sampled_from([str(n) for n in range(6)])
documents = st.dictionaries(st.sampled_from(["id", "a", "b", "c", "d"]), st.integers(0, 3), max_size=4)


def additions(index: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda index, mode, skip, docs: {
            "op": "addDocuments",
            "index": index,
            "mode": mode,
            "skipCreation": skip,
            "documents": [[external_id, doc, position] for position, (external_id, doc) in enumerate(docs)],
        },
        index,
        st.sampled_from(["replace", "update"]),
        st.sampled_from([False, False, False, True]),
        st.lists(st.tuples(external_ids, documents), max_size=6),
    )


def deletions(index: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda index, ids: {"op": "deleteDocuments", "index": index, "ids": ids},
        index,
        st.lists(external_ids, max_size=4),
    )


adds, deletes = additions(indexes), deletions(indexes)
clears = st.builds(lambda index: {"op": "clearDocuments", "index": index}, indexes)
drops = st.builds(lambda index: {"op": "deleteIndex", "index": index}, indexes)
swaps = st.builds(lambda: {"op": "swapIndexes", "a": "x", "b": "y"})
# Weighted by sampling the strategy: ``st.one_of`` drops repeated alternatives, which weighs them equally.
any_operation = st.sampled_from([adds, adds, adds, deletes, deletes, clears, drops, swaps]).flatmap(
    lambda op: op
)
steps = st.lists(
    st.tuples(
        st.sampled_from(["apply", "apply", "apply", "abort", "replay"]),
        st.lists(any_operation, min_size=1, max_size=6),
    ),
    max_size=8,
)
# Only creations and deletions in one index: deleting below the highest id and then creating is what
# tells "one past the highest live id" (id order is sequence order) from reusing freed ids.
churn_operation = st.sampled_from([additions(st.just("x")), deletions(st.just("x"))]).flatmap(lambda op: op)
churn = st.lists(st.tuples(st.just("apply"), st.lists(churn_operation, min_size=1, max_size=6)), max_size=8)


def model_apply(model: Model, operation: dict[str, Any]) -> dict[str, int] | None:
    """Applies the operation to the model; returns its task counts, or None for an index-level operation."""
    if operation["op"] == "swapIndexes":
        x, y = model.pop("x", None), model.pop("y", None)
        model.update({name: docs for name, docs in (("x", y), ("y", x)) if docs is not None})
        return None
    index = operation["index"]
    indexed = deleted = 0
    if operation["op"] == "addDocuments":
        docs = model.setdefault(index, {})
        for external_id, document, position in operation["documents"]:
            if external_id in docs:
                doc_id, sequence, previous = docs[external_id]
                merged = {**previous, **document} if operation["mode"] == "update" else document
                docs[external_id] = (doc_id, sequence, merged)
            elif operation["skipCreation"]:
                continue
            else:
                doc_id = max((doc_id for doc_id, _, _ in docs.values()), default=-1) + 1
                docs[external_id] = (doc_id, operation["task"] * 2**32 + position, document)
            indexed += 1
    elif index in model and operation["op"] == "deleteDocuments":
        for external_id in operation["ids"]:
            deleted += model[index].pop(external_id, None) is not None
    elif index in model:
        deleted = len(model[index])
        if operation["op"] == "deleteIndex":
            del model[index]
        else:
            model[index].clear()
    return {"indexedDocuments": indexed, "deletedDocuments": deleted}


def assert_matches(store: ShardStore, model: Model) -> None:
    for index in INDEXES:
        assert store.index_exists(index) == (index in model)
        docs = model.get(index, {})
        expected = sorted(docs.values(), key=lambda entry: entry[0])
        listed, total = store.list_documents(index, 0, 100)
        assert total == len(docs)
        assert [(sequence, list(doc.items())) for sequence, doc in listed] == [
            (sequence, list(doc.items())) for _, sequence, doc in expected
        ]
        sequences = [sequence for sequence, _ in listed]
        assert sequences == sorted(set(sequences)), "id order is sequence order, sequences are distinct"
        assert stored_ids(store, index) == {external_id: entry[:2] for external_id, entry in docs.items()}
        for external_id, (_, _, document) in docs.items():
            assert store.get_document(index, external_id) == document
        distribution: dict[str, int] = {}
        for _, _, document in docs.values():
            for name in document:
                distribution[name] = distribution.get(name, 0) + 1
        stats = store.index_stats(index)
        assert stats["numberOfDocuments"] == len(docs)
        assert stats["fieldDistribution"] == distribution
        assert (stats["rawDocumentDbSize"] > 0) == bool(docs)


def stored_ids(store: ShardStore, index: str) -> dict[str, tuple[int, int]]:
    """External id -> (internal id, sequence) as stored, the sequence through the search path's reader."""
    with store.env.lmdb.begin() as txn:
        index_id = catalog.lookup(store.env, txn, index)
        if index_id is None:
            return {}
        prefix = index_prefix(index_id)
        ids = {
            key[len(prefix) :].decode(): decode_u32(value)
            for key, value in txn.cursor(store.env.external_ids)
            if key.startswith(prefix)
        }
        sequences = read_sequences(store.env, txn, index_id, list(ids.values()))
    return {
        external_id: (doc_id, sequence)
        for (external_id, doc_id), sequence in zip(ids.items(), sequences, strict=True)
    }


def stored_keys(store: ShardStore) -> list[bytes]:
    """Every key of every per-index database, whichever index (live or deleted) it belongs to, but the
    field listing's records: an index keeps listing its fields once its documents are gone."""
    with store.env.lmdb.begin() as txn:
        keys = [key for db in store.env.per_index for key, _ in txn.cursor(db)]
    return [key for key in keys if key[4:] != b"fields"]


@settings(max_examples=200, deadline=None)
@given(steps)
def test_store_matches_dict_model(history: list[tuple[str, list[dict[str, Any]]]]) -> None:
    check_history(history)


@settings(max_examples=100, deadline=None)
@given(churn)
def test_ids_follow_sequences_under_churn(history: list[tuple[str, list[dict[str, Any]]]]) -> None:
    check_history(history)


def check_history(history: list[tuple[str, list[dict[str, Any]]]]) -> None:
    """Applies each step to the store and the model and compares them, then deletes everything."""
    with tempfile.TemporaryDirectory() as directory:
        store = ShardStore(Path(directory))
        try:
            model: Model = {}
            results: dict[int, dict[str, Any]] = {}
            # Task uids grow across batches, as the scheduler applies tasks in uid order.
            task_uids = count()
            for batch_uid, (kind, operations) in enumerate(history):
                for operation in operations:
                    operation["task"] = next(task_uids)
                if kind == "abort":
                    with pytest.raises(BatchAborted):
                        store.apply_batch(batch_uid, operations, should_abort=lambda: True)
                    assert store.applied_batch(batch_uid) is None
                elif kind == "replay" and results:
                    replayed = max(results)
                    assert store.apply_batch(replayed, operations) == results[replayed]
                else:
                    counts = {str(op["task"]): model_apply(model, op) for op in operations}
                    expected = {task: count for task, count in counts.items() if count is not None}
                    results[batch_uid] = store.apply_batch(batch_uid, operations)
                    assert results[batch_uid]["tasks"] == expected
                assert_matches(store, model)

            everything = [
                {"op": "deleteDocuments", "task": 0, "index": "x", "ids": list(model.get("x", {}))},
                {"op": "clearDocuments", "task": 1, "index": "y"},
            ]
            store.apply_batch(len(history), everything)
            for index in INDEXES:
                assert store.list_documents(index, 0, 100) == ([], 0)
                assert store.index_stats(index)["rawDocumentDbSize"] == 0
            assert stored_keys(store) == []
        finally:
            store.close()
