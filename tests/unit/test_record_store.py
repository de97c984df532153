"""Token records per document: plain until a batch brings enough to train the index's dictionary, then
compressed with it; every record stays readable (search and re-indexing read them) whichever way it was
written, and a data directory in the older block layout is refused instead of misread."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lmdb
import pytest

from shard.index import catalog
from shard.index.env import StoreFormatError, encode_u32
from shard.index.record_store import TRAINING_MIN_RECORDS, dictionary_id, read_record
from shard.index.records import decode_record
from shard.store import ShardStore
from tests.support.shard_batches import apply

_WORDS = ["wing", "flow", "lift", "drag", "vortex", "shock", "layer", "boundary", "pressure", "heat"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ShardStore]:
    opened = ShardStore(tmp_path / "store")
    yield opened
    opened.close()


def documents(first: int, number: int) -> list[dict[str, Any]]:
    rng = random.Random(first)
    return [
        {"id": first + k, "title": " ".join(rng.choices(_WORDS, k=rng.randint(2, 12)))}
        for k in range(number)
    ]


def add(store: ShardStore, docs: list[dict[str, Any]]) -> None:
    entries = [[str(doc["id"]), doc, position] for position, doc in enumerate(docs)]
    operation = {"op": "addDocuments", "task": 1, "index": "books", "mode": "replace", "documents": entries}
    apply(store, operation)


def stored_records(store: ShardStore) -> tuple[bytes | None, dict[int, list[str]], list[bytes]]:
    """(dictionary id, doc id -> title words, raw stored values)."""
    env = store.env
    with env.lmdb.begin() as txn:
        index_id = catalog.lookup(env, txn, "books")
        assert index_id is not None
        dictionary = dictionary_id(env, txn, index_id)
        words: dict[int, list[str]] = {}
        raw: list[bytes] = []
        for doc_id in range(10_000):
            stored = txn.get(index_id.to_bytes(4, "big") + doc_id.to_bytes(4, "big"), db=env.records)
            if stored is None:
                continue
            raw.append(stored)
            value = read_record(env, txn, store.codec, index_id, doc_id, dictionary)
            assert value is not None
            words[doc_id] = [word for field in decode_record(value) for word in field.words]
        return dictionary, words, raw


def test_small_batches_stay_plain_and_a_large_one_trains_the_dictionary(store: ShardStore) -> None:
    add(store, documents(0, 10))
    dictionary, words, raw = stored_records(store)
    assert dictionary is None and len(words) == 10
    assert all(value[:1] == b"\x00" for value in raw)

    add(store, documents(10, TRAINING_MIN_RECORDS))
    dictionary, words, raw = stored_records(store)
    assert dictionary is not None and len(dictionary) == 8
    assert sum(value[:1] == b"\x01" for value in raw) == TRAINING_MIN_RECORDS
    assert sum(value[:1] == b"\x00" for value in raw) == 10
    every = documents(0, 10) + documents(10, TRAINING_MIN_RECORDS)
    expected = sorted(sorted([str(doc["id"]), *doc["title"].split()]) for doc in every)
    assert sorted(sorted(found) for found in words.values()) == expected


def test_search_and_reindexing_read_both_kinds_of_record(store: ShardStore) -> None:
    add(store, documents(0, 5))
    add(store, documents(5, TRAINING_MIN_RECORDS))
    hits = store.search("books", {"q": "vortex", "limit": 1000})
    assert hits is not None
    every = documents(0, 5) + documents(5, TRAINING_MIN_RECORDS)
    assert hits.candidates == sum("vortex" in doc["title"].split() for doc in every) > 0
    # Replacing every document reads each old record (plain and with dictionary) to remove its postings.
    add(store, [{"id": doc["id"], "title": "calm"} for doc in every])
    after = store.search("books", {"q": "vortex", "limit": 1000})
    assert after is not None and after.candidates == 0
    calm = store.search("books", {"q": "calm", "limit": 1000})
    assert calm is not None and calm.candidates == 5 + TRAINING_MIN_RECORDS


def test_a_store_in_the_block_layout_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old"
    path.mkdir()
    env = lmdb.open(str(path), max_dbs=16)
    with env.begin(write=True) as txn:
        txn.put(b"books", encode_u32(0), db=env.open_db(b"catalog", txn=txn))
        env.open_db(b"meta", txn=txn)
    env.close()
    with pytest.raises(StoreFormatError, match="storage format 1"):
        ShardStore(path)


def test_a_new_store_records_its_format_and_reopens(tmp_path: Path) -> None:
    first = ShardStore(tmp_path / "store")
    add(first, documents(0, 3))
    first.close()
    again = ShardStore(tmp_path / "store")
    found = again.search("books", {"q": "", "limit": 10})
    assert found is not None and found.candidates == 3
    again.close()
