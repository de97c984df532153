"""Random batches of document writes leave the shard store equal to a plain-dict model of Meilisearch.

The model also allocates internal ids smallest-free-first, so listing order and id reuse are checked,
and deleting everything must leave no key behind in any per-index database.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.index import BatchAborted, ShardStore

INDEXES = ("x", "y")
# Mostly one index, so that writes, deletes and re-allocations of ids meet within a batch.
indexes = st.sampled_from(["x", "x", "x", "y"])
Doc = dict[str, Any]
# index uid -> external id -> (internal id, document)
Model = dict[str, dict[str, tuple[int, Doc]]]

external_ids = st.sampled_from([str(n) for n in range(6)])
documents = st.dictionaries(st.sampled_from(["id", "a", "b", "c", "d"]), st.integers(0, 3), max_size=4)
adds = st.builds(
    lambda index, mode, skip, docs: {
        "op": "addDocuments",
        "index": index,
        "mode": mode,
        "skipCreation": skip,
        "documents": [list(pair) for pair in docs],
    },
    indexes,
    st.sampled_from(["replace", "update"]),
    st.sampled_from([False, False, False, True]),
    st.lists(st.tuples(external_ids, documents), max_size=6),
)
deletes = st.builds(
    lambda index, ids: {"op": "deleteDocuments", "index": index, "ids": ids},
    indexes,
    st.lists(external_ids, max_size=4),
)
clears = st.builds(lambda index: {"op": "clearDocuments", "index": index}, indexes)
drops = st.builds(lambda index: {"op": "deleteIndex", "index": index}, indexes)
swaps = st.builds(lambda: {"op": "swapIndexes", "a": "x", "b": "y"})
batches = st.lists(
    st.one_of(adds, adds, adds, deletes, deletes, clears, drops, swaps), min_size=1, max_size=6
)
steps = st.lists(
    st.tuples(st.sampled_from(["apply", "apply", "apply", "abort", "replay"]), batches), max_size=8
)


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
        for external_id, document in operation["documents"]:
            if external_id in docs:
                doc_id, previous = docs[external_id]
                merged = {**previous, **document} if operation["mode"] == "update" else document
                docs[external_id] = (doc_id, merged)
            elif operation["skipCreation"]:
                continue
            else:
                live = {doc_id for doc_id, _ in docs.values()}
                docs[external_id] = (min(set(range(len(live) + 1)) - live), document)
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
        assert [(doc_id, list(doc.items())) for doc_id, doc in listed] == [
            (doc_id, list(doc.items())) for doc_id, doc in expected
        ]
        for external_id, (_, document) in docs.items():
            assert store.get_document(index, external_id) == document
        distribution: dict[str, int] = {}
        for _, document in docs.values():
            for name in document:
                distribution[name] = distribution.get(name, 0) + 1
        stats = store.index_stats(index)
        assert stats["numberOfDocuments"] == len(docs)
        assert stats["fieldDistribution"] == distribution
        assert (stats["rawDocumentDbSize"] > 0) == bool(docs)


def stored_keys(store: ShardStore) -> list[bytes]:
    """Every key of every per-index database, whichever index (live or deleted) it belongs to."""
    with store.env.lmdb.begin() as txn:
        return [key for db in store.env.per_index for key, _ in txn.cursor(db)]


@settings(max_examples=200, deadline=None)
@given(steps)
def test_store_matches_dict_model(history: list[tuple[str, list[dict[str, Any]]]]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        store = ShardStore(Path(directory))
        try:
            model: Model = {}
            results: dict[int, dict[str, Any]] = {}
            for batch_uid, (kind, operations) in enumerate(history):
                for task_uid, operation in enumerate(operations):
                    operation["task"] = task_uid
                if kind == "abort":
                    with pytest.raises(BatchAborted):
                        store.apply_batch(batch_uid, operations, should_abort=lambda: True)
                    assert store.applied_batch(batch_uid) is None
                elif kind == "replay" and results:
                    replayed = max(results)
                    assert store.apply_batch(replayed, operations) == results[replayed]
                else:
                    counts = {str(task): model_apply(model, op) for task, op in enumerate(operations)}
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
