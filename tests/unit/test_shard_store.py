"""The shard store applies scheduler batches atomically and idempotently and keeps them across reopen."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from shard.index import BatchAborted
from shard.index.env import decode_u32, index_prefix
from shard.store import ShardStore
from tests.support.shard_batches import apply


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ShardStore]:
    opened = ShardStore(tmp_path / "store")
    yield opened
    opened.close()


def add(index: str, *docs: dict[str, Any], task: int = 1, mode: str = "replace", skip: bool = False) -> dict:
    entries = [[str(doc["id"]), doc, position] for position, doc in enumerate(docs)]
    return {
        "op": "addDocuments",
        "task": task,
        "index": index,
        "mode": mode,
        "skipCreation": skip,
        "documents": entries,
    }


def seq(task: int, position: int) -> int:
    """The sequence a document created at ``position`` of task ``task``'s payload must get."""
    return task * 2**32 + position


def delete(index: str, *ids: str, task: int = 2) -> dict[str, Any]:
    return {"op": "deleteDocuments", "task": task, "index": index, "ids": list(ids)}


def docs_of(store: ShardStore, index: str) -> list[dict[str, Any]]:
    return [doc for _, doc in store.list_documents(index, 0, 1_000_000)[0]]


def internal_ids(store: ShardStore, index_id: int) -> dict[str, int]:
    """External id -> internal id, read from the mapping (the store's API never shows internal ids)."""
    prefix = index_prefix(index_id)
    with store.env.lmdb.begin() as txn:
        return {
            key[len(prefix) :].decode(): decode_u32(value)
            for key, value in txn.cursor(store.env.external_ids)
            if key.startswith(prefix)
        }


# The field listing's record outlives the documents (only deleting the index removes it).
FIELD_LISTING = [index_prefix(0) + b"fields"]
EMPTY_STATS = {
    "numberOfDocuments": 0,
    "rawDocumentDbSize": 0,
    "fieldDistribution": {},
    "numberOfEmbeddings": 0,
    "numberOfEmbeddedDocuments": 0,
}


def keys_with_prefix(store: ShardStore, index_id: int) -> list[bytes]:
    prefix = index_prefix(index_id)
    with store.env.lmdb.begin() as txn:
        return [key for db in store.env.per_index for key, _ in txn.cursor(db) if key.startswith(prefix)]


# --- indexes ---------------------------------------------------------------------------------------


def test_create_index_is_idempotent(store: ShardStore) -> None:
    assert not store.index_exists("movies")
    result = apply(store, {"op": "createIndex", "index": "movies"}, {"op": "createIndex", "index": "movies"})
    assert store.index_exists("movies")
    assert result == {"tasks": {}, "indexes": {"movies": {"numberOfDocuments": 0}}}
    assert store.index_stats("movies") == EMPTY_STATS


def test_add_documents_creates_index(store: ShardStore) -> None:
    result = apply(store, add("movies", {"id": 1, "title": "Alien"}, task=3))
    assert result == {
        "tasks": {"3": {"indexedDocuments": 1, "deletedDocuments": 0}},
        "indexes": {"movies": {"numberOfDocuments": 1}},
    }
    assert store.index_exists("movies")
    assert store.get_document("movies", "1") == {"id": 1, "title": "Alien"}


def test_delete_index_removes_everything_and_counts(store: ShardStore) -> None:
    apply(store, add("movies", {"id": 1}, {"id": 2}, {"id": 3}), add("books", {"id": 1}))
    result = apply(store, {"op": "deleteIndex", "index": "movies", "task": 7})
    assert result["tasks"] == {"7": {"indexedDocuments": 0, "deletedDocuments": 3}}
    assert not store.index_exists("movies")
    assert store.get_document("movies", "1") is None
    assert store.list_documents("movies", 0, 10) == ([], 0)
    assert keys_with_prefix(store, 0) == []
    assert docs_of(store, "books") == [{"id": 1}]


def test_delete_missing_index_counts_zero(store: ShardStore) -> None:
    result = apply(store, {"op": "deleteIndex", "index": "nope", "task": 4})
    assert result["tasks"] == {"4": {"indexedDocuments": 0, "deletedDocuments": 0}}


def test_recreated_index_starts_empty(store: ShardStore) -> None:
    apply(store, add("movies", {"id": 1}), {"op": "deleteIndex", "index": "movies", "task": 2})
    apply(store, {"op": "createIndex", "index": "movies"})
    assert docs_of(store, "movies") == []
    assert store.get_document("movies", "1") is None


def test_rename_moves_data_without_copying(store: ShardStore) -> None:
    apply(store, add("a", {"id": 1, "x": 1}))
    raw_before = store.index_stats("a")["rawDocumentDbSize"]
    result = apply(store, {"op": "renameIndex", "from": "a", "to": "b"})
    assert result == {"tasks": {}, "indexes": {}}
    assert not store.index_exists("a")
    assert store.get_document("b", "1") == {"id": 1, "x": 1}
    assert store.index_stats("b")["rawDocumentDbSize"] == raw_before
    assert keys_with_prefix(store, 0) != []


def test_rename_onto_existing_index_fails_whole_batch(store: ShardStore) -> None:
    apply(store, {"op": "createIndex", "index": "a"}, {"op": "createIndex", "index": "b"})
    with pytest.raises(ValueError, match="already exists"):
        store.apply_batch(99, [add("a", {"id": 1}), {"op": "renameIndex", "from": "a", "to": "b"}])
    assert store.get_document("a", "1") is None
    assert store.applied_batch(99) is None


def test_rename_of_index_absent_on_this_shard_is_a_no_op(store: ShardStore) -> None:
    apply(store, {"op": "renameIndex", "from": "ghost", "to": "b"})
    assert not store.index_exists("b")


def test_swap_indexes(store: ShardStore) -> None:
    apply(store, add("x", {"id": 1, "in": "x"}), add("y", {"id": 1, "in": "y"}, {"id": 2, "in": "y"}))
    apply(store, {"op": "swapIndexes", "a": "x", "b": "y"})
    assert docs_of(store, "x") == [{"id": 1, "in": "y"}, {"id": 2, "in": "y"}]
    assert docs_of(store, "y") == [{"id": 1, "in": "x"}]
    assert store.index_stats("x")["numberOfDocuments"] == 2


def test_swap_with_absent_index_moves_the_present_one(store: ShardStore) -> None:
    apply(store, add("x", {"id": 1}))
    apply(store, {"op": "swapIndexes", "a": "x", "b": "y"})
    assert not store.index_exists("x")
    assert store.get_document("y", "1") == {"id": 1}


def test_unknown_operation_is_rejected(store: ShardStore) -> None:
    with pytest.raises(ValueError, match="unknown shard operation"):
        apply(store, {"op": "frobnicate"})


# --- documents -------------------------------------------------------------------------------------


def test_replace_stores_exactly_the_new_document(store: ShardStore) -> None:
    apply(store, add("m", {"id": 1, "a": 1, "b": 2}))
    result = apply(store, add("m", {"id": 1, "c": 3}, mode="replace", task=9))
    assert result["tasks"]["9"]["indexedDocuments"] == 1
    assert store.get_document("m", "1") == {"id": 1, "c": 3}


def test_update_merges_keeping_field_order(store: ShardStore) -> None:
    apply(store, add("m", {"id": 1, "a": 1, "b": 2, "c": 3}))
    apply(store, add("m", {"z": 0, "b": 20, "id": 1}, mode="update"))
    document = store.get_document("m", "1")
    assert document == {"id": 1, "a": 1, "b": 20, "c": 3, "z": 0}
    assert list(document) == ["id", "a", "b", "c", "z"]


def test_update_inserts_absent_document_as_is(store: ShardStore) -> None:
    apply(store, add("m", {"b": 1, "id": 5}, mode="update"))
    assert list(store.get_document("m", "5") or {}) == ["b", "id"]


def test_field_order_of_replace_is_preserved(store: ShardStore) -> None:
    apply(store, add("m", {"zeta": 1, "id": 1, "alpha": {"y": 1, "x": 2}}))
    document = store.get_document("m", "1") or {}
    assert list(document) == ["zeta", "id", "alpha"]
    assert list(document["alpha"]) == ["y", "x"]


def test_skip_creation_ignores_new_documents(store: ShardStore) -> None:
    apply(store, add("m", {"id": 1, "a": 1}))
    result = apply(store, add("m", {"id": 1, "b": 2}, {"id": 2, "b": 2}, mode="update", skip=True, task=4))
    assert result["tasks"]["4"]["indexedDocuments"] == 1
    assert store.get_document("m", "1") == {"id": 1, "a": 1, "b": 2}
    assert store.get_document("m", "2") is None
    assert store.index_stats("m")["numberOfDocuments"] == 1


def test_duplicate_ids_in_one_operation_later_wins(store: ShardStore) -> None:
    result = apply(store, add("m", {"id": 1, "v": 1, "a": 1}, {"id": 1, "v": 2}, task=6))
    assert store.get_document("m", "1") == {"id": 1, "v": 2}
    # Like Meilisearch, every document of the payload that was written is counted.
    assert result["tasks"]["6"]["indexedDocuments"] == 2
    assert store.index_stats("m")["numberOfDocuments"] == 1


def test_duplicate_ids_in_update_mode_merge_in_order(store: ShardStore) -> None:
    apply(store, add("m", {"id": 1, "a": 1}, {"id": 1, "b": 2}, {"id": 1, "a": 3}, mode="update"))
    assert store.get_document("m", "1") == {"id": 1, "a": 3, "b": 2}


def test_delete_documents_counts_existing_only(store: ShardStore) -> None:
    apply(store, add("m", {"id": 1}, {"id": "abc"}, {"id": 3}))
    result = apply(store, delete("m", "1", "abc", "missing", "abc", task=4))
    assert result["tasks"] == {"4": {"indexedDocuments": 0, "deletedDocuments": 2}}
    assert docs_of(store, "m") == [{"id": 3}]


def test_delete_documents_on_missing_index_does_not_create_it(store: ShardStore) -> None:
    result = apply(store, delete("ghost", "1", task=4))
    assert result["tasks"]["4"]["deletedDocuments"] == 0
    assert not store.index_exists("ghost")


def test_clear_documents(store: ShardStore) -> None:
    apply(store, add("m", {"id": 1}, {"id": 2}), add("other", {"id": 1}))
    result = apply(store, {"op": "clearDocuments", "task": 5, "index": "m"})
    assert result["tasks"] == {"5": {"indexedDocuments": 0, "deletedDocuments": 2}}
    assert store.index_exists("m")
    assert docs_of(store, "m") == []
    assert keys_with_prefix(store, 0) == FIELD_LISTING
    assert store.field_paths("m") == ["id"]
    assert store.index_stats("m") == EMPTY_STATS
    assert docs_of(store, "other") == [{"id": 1}]
    apply(store, add("m", {"id": 9}, task=6))
    assert store.list_documents("m", 0, 10)[0] == [(seq(6, 0), {"id": 9})]
    assert internal_ids(store, 0) == {"9": 0}, "a cleared index numbers its documents from 0 again"


def test_counts_accumulate_per_task_across_operations(store: ShardStore) -> None:
    result = apply(
        store,
        add("m", {"id": 1}, task=3),
        add("m", {"id": 2}, {"id": 3}, task=3),
        delete("m", "1", task=3),
        add("m", {"id": 4}, task=8),
    )
    assert result["tasks"] == {
        "3": {"indexedDocuments": 3, "deletedDocuments": 1},
        "8": {"indexedDocuments": 1, "deletedDocuments": 0},
    }


def test_long_external_ids_are_distinct(store: ShardStore) -> None:
    base = "x" * 500
    ids = [base + "a" * 11, base + "a" * 10 + "b", "y" * 506, "y" * 507]
    apply(store, add("m", *({"id": external_id, "n": n} for n, external_id in enumerate(ids))))
    for n, external_id in enumerate(ids):
        assert store.get_document("m", external_id) == {"id": external_id, "n": n}
    apply(store, delete("m", *ids))
    assert keys_with_prefix(store, 0) == FIELD_LISTING


# --- internal ids, sequences and listing ----------------------------------------------------------


def test_sequence_comes_from_task_uid_and_payload_position(store: ShardStore) -> None:
    first = add("m", {"id": "a"}, {"id": "b"}, task=3)
    first["documents"] = [["a", {"id": "a"}, 4], ["b", {"id": "b"}, 9]]
    apply(store, first, add("m", {"id": "c"}, task=5))
    assert store.list_documents("m", 0, 10)[0] == [
        (seq(3, 4), {"id": "a"}),
        (seq(3, 9), {"id": "b"}),
        (seq(5, 0), {"id": "c"}),
    ]


def test_replace_and_update_keep_the_sequence(store: ShardStore) -> None:
    apply(store, add("m", {"id": 1}, {"id": 2}, task=1))
    apply(store, add("m", {"id": 3}, {"id": 1, "v": "new"}, task=2))
    apply(store, add("m", {"id": 2, "w": 1}, mode="update", task=3))
    assert store.list_documents("m", 0, 10)[0] == [
        (seq(1, 0), {"id": 1, "v": "new"}),
        (seq(1, 1), {"id": 2, "w": 1}),
        (seq(2, 0), {"id": 3}),
    ]
    assert internal_ids(store, 0) == {"1": 0, "2": 1, "3": 2}


def test_duplicate_in_one_payload_keeps_the_first_position(store: ShardStore) -> None:
    apply(store, add("m", {"id": 1, "v": 1}, {"id": 2}, {"id": 1, "v": 2}, task=4))
    assert store.list_documents("m", 0, 10)[0] == [(seq(4, 0), {"id": 1, "v": 2}), (seq(4, 1), {"id": 2})]


def test_deleted_document_loses_its_sequence_and_a_new_one_goes_last(store: ShardStore) -> None:
    apply(store, add("m", {"id": 1}, {"id": 2}, task=1))
    apply(store, delete("m", "1", task=2), add("m", {"id": 1, "back": True}, task=3))
    assert store.list_documents("m", 0, 10)[0] == [
        (seq(1, 1), {"id": 2}),
        (seq(3, 0), {"id": 1, "back": True}),
    ]
    apply(store, delete("m", "1", "2", task=4))
    with store.env.lmdb.begin() as txn:
        assert list(txn.cursor(store.env.sequences)) == []


def test_internal_ids_only_grow_past_live_ones(store: ShardStore) -> None:
    apply(store, add("m", *({"id": n} for n in range(6)), task=1))
    apply(store, delete("m", "1", "4", task=2))
    apply(store, add("m", {"id": "a"}, {"id": "b"}, task=3))
    ids = internal_ids(store, 0)
    assert ids == {"0": 0, "2": 2, "3": 3, "5": 5, "a": 6, "b": 7}, "freed ids below live ones are not reused"
    # Deleting the newest documents frees ids above every live one; reusing them keeps id order.
    apply(store, delete("m", "a", "b", task=4), add("m", {"id": "c"}, task=5))
    assert internal_ids(store, 0)["c"] == 6
    listed = [doc["id"] for _, doc in store.list_documents("m", 0, 10)[0]]
    assert listed == [0, 2, 3, 5, "c"]


def test_id_order_is_sequence_order_within_one_batch(store: ShardStore) -> None:
    apply(
        store,
        add("m", {"id": 0}, {"id": 1}, {"id": 2}, {"id": "new"}, task=1),
        delete("m", "0", "new", task=2),
        add("m", {"id": "s"}, {"id": "t"}, task=3),
    )
    ids = internal_ids(store, 0)
    assert sorted(ids, key=ids.__getitem__) == ["1", "2", "s", "t"]
    listed = store.list_documents("m", 0, 10)[0]
    assert [sequence for sequence, _ in listed] == [seq(1, 1), seq(1, 2), seq(3, 0), seq(3, 1)]


def test_wipes_remove_sequences(store: ShardStore) -> None:
    apply(store, add("m", {"id": 1}, {"id": 2}), add("n", {"id": 1}))
    apply(
        store,
        {"op": "clearDocuments", "task": 2, "index": "m"},
        {"op": "deleteIndex", "task": 3, "index": "n"},
    )
    with store.env.lmdb.begin() as txn:
        assert list(txn.cursor(store.env.sequences)) == []


def test_list_documents_offset_limit_and_total(store: ShardStore) -> None:
    apply(store, add("m", *({"id": n} for n in range(10))))
    apply(store, delete("m", "2", "3"))
    page, total = store.list_documents("m", 3, 2)
    assert total == 8
    assert page == [(seq(1, 5), {"id": 5}), (seq(1, 6), {"id": 6})]
    assert store.list_documents("m", 8, 5) == ([], 8)
    assert store.list_documents("m", 7, 5) == ([(seq(1, 9), {"id": 9})], 8)
    assert store.list_documents("m", 0, 0) == ([], 8)


def test_list_documents_by_ids(store: ShardStore) -> None:
    apply(store, add("m", *({"id": n} for n in range(5))))
    page, total = store.list_documents("m", 0, 10, ids=["4", "nope", "1", "4"])
    assert total == 2
    assert page == [(seq(1, 1), {"id": 1}), (seq(1, 4), {"id": 4})]
    assert store.list_documents("m", 1, 10, ids=["4", "1"]) == ([(seq(1, 4), {"id": 4})], 2)


def test_reads_of_missing_index(store: ShardStore) -> None:
    assert store.get_document("ghost", "1") is None
    assert store.list_documents("ghost", 0, 10, ids=["1"]) == ([], 0)
    assert store.index_stats("ghost")["numberOfDocuments"] == 0


# --- durability, idempotence, abort ----------------------------------------------------------------


def test_same_batch_twice_applies_once(store: ShardStore) -> None:
    operations = [add("m", {"id": 1, "n": 1}, task=1), add("m", {"id": 1, "n": 2}, mode="update", task=2)]
    first = store.apply_batch(42, operations)
    raw_size = store.index_stats("m")["rawDocumentDbSize"]
    again = store.apply_batch(42, [delete("m", "1", task=3)])
    assert again == first == store.applied_batch(42)
    assert store.get_document("m", "1") == {"id": 1, "n": 2}
    assert store.index_stats("m")["rawDocumentDbSize"] == raw_size
    assert store.applied_batch(43) is None


def test_abort_writes_nothing(store: ShardStore) -> None:
    apply(store, add("m", {"id": 1}))
    size_before = store.database_size()
    with pytest.raises(BatchAborted):
        store.apply_batch(7, [add("m", {"id": 2}), delete("m", "1")], should_abort=lambda: True)
    assert store.applied_batch(7) is None
    assert docs_of(store, "m") == [{"id": 1}]
    assert store.database_size() == size_before
    assert store.apply_batch(7, [add("m", {"id": 2})])["tasks"]["1"]["indexedDocuments"] == 1


def test_abort_is_checked_while_documents_are_written(store: ShardStore) -> None:
    calls = 0

    def abort_on_second_check() -> bool:
        nonlocal calls
        calls += 1
        return calls > 1

    with pytest.raises(BatchAborted):
        store.apply_batch(
            1, [add("m", *({"id": n} for n in range(2500)))], should_abort=abort_on_second_check
        )
    assert calls == 2
    assert not store.index_exists("m")


def test_reopen_keeps_everything(tmp_path: Path) -> None:
    first = ShardStore(tmp_path)
    result = first.apply_batch(
        5, [add("m", {"id": 1, "t": "a"}, {"id": 2}), {"op": "renameIndex", "from": "m", "to": "n"}]
    )
    first.apply_batch(6, [delete("n", "1"), add("n", {"id": 3}, task=3)])
    stats = first.index_stats("n")
    first.close()
    reopened = ShardStore(tmp_path)
    try:
        assert reopened.applied_batch(5) == result
        assert reopened.list_documents("n", 0, 10) == ([(seq(1, 1), {"id": 2}), (seq(3, 0), {"id": 3})], 2)
        assert reopened.index_stats("n") == stats
        assert reopened.apply_batch(5, [])["tasks"] == result["tasks"]
        assert reopened.database_size() > 0
    finally:
        reopened.close()


_WRITER = """
import sys
from pathlib import Path
from shard.store import ShardStore

store = ShardStore(Path(sys.argv[1]))
for batch in range(10_000):
    docs = [[f"{batch}-{n}", {"id": f"{batch}-{n}", "text": "lorem ipsum " * 20}, n] for n in range(2000)]
    store.apply_batch(batch, [{"op": "addDocuments", "task": batch, "index": "m", "mode": "replace",
                               "skipCreation": False, "documents": docs}])
    print(batch, flush=True)
"""


def test_kill_9_mid_batch_leaves_whole_batches_only(tmp_path: Path) -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert writer.stdout is not None
    for _ in range(3):
        writer.stdout.readline()
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    store = ShardStore(tmp_path)
    try:
        applied = [batch for batch in range(10_000) if store.applied_batch(batch) is not None]
        assert len(applied) >= 3
        assert applied == list(range(len(applied)))
        assert store.index_stats("m")["numberOfDocuments"] == 2000 * len(applied)
        assert store.get_document("m", f"{len(applied)}-0") is None
        assert store.get_document("m", f"{len(applied) - 1}-1999") is not None
    finally:
        store.close()


# --- stats -----------------------------------------------------------------------------------------


def test_stats_follow_adds_updates_and_deletes(store: ShardStore) -> None:
    apply(store, add("m", {"id": 1, "title": "a", "genre": "x"}, {"id": 2, "title": "b"}))
    stats = store.index_stats("m")
    assert stats["numberOfDocuments"] == 2
    assert stats["fieldDistribution"] == {"genre": 1, "id": 2, "title": 2}
    assert stats["rawDocumentDbSize"] > 0

    apply(store, add("m", {"id": 2, "year": 1999}, mode="update"), add("m", {"id": 1, "year": 1}))
    assert store.index_stats("m")["fieldDistribution"] == {"id": 2, "title": 1, "year": 2}

    apply(store, delete("m", "2"))
    assert store.index_stats("m")["fieldDistribution"] == {"id": 1, "year": 1}

    apply(store, delete("m", "1"))
    assert store.index_stats("m") == EMPTY_STATS
    assert keys_with_prefix(store, 0) == FIELD_LISTING


def test_raw_size_matches_stored_values(store: ShardStore) -> None:
    apply(store, add("m", *({"id": n, "text": "word " * n} for n in range(50))))
    apply(store, add("m", {"id": 3, "text": "changed"}, mode="update"), delete("m", "7"))
    documents, _ = store.list_documents("m", 0, 100)
    stored = sum(len(orjson.dumps(document)) for _, document in documents)
    assert store.index_stats("m")["rawDocumentDbSize"] == stored
