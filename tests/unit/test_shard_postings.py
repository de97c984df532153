"""Postings and token records on one shard store: exact contents, and a return to empty.

The property test drives random adds, updates and deletes of text documents and checks, after every
batch, that the words table (with its START and WHOLE marks) equals postings rebuilt from scratch
from the model's documents, and that deleting everything leaves no key in any searchable database.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

from shard.analysis import AnalysisConfig, Analyzer
from shard.index.env import decode_u32
from shard.index.postings import (
    START,
    WHOLE,
    decode_all,
    decode_bitmap,
    decode_marked,
    encode_bitmap,
    encode_marked,
    split_key,
)
from shard.index.settings import needs_rebuild
from shard.store import ShardStore

ANALYZER = Analyzer(AnalysisConfig.from_settings({}))
WORDS = ["apple", "apples", "banana", "cherry", "running", "runs", "zebra", "étoile", "東京"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ShardStore]:
    shard = ShardStore(tmp_path / "shard")
    yield shard
    shard.close()


def add(store: ShardStore, batch: int, docs: list[dict[str, Any]], mode: str = "replace") -> None:
    operation = {
        "op": "addDocuments",
        "task": batch,
        "index": "x",
        "mode": mode,
        "documents": [[str(doc["id"]), doc, position] for position, doc in enumerate(docs)],
    }
    store.apply_batch(batch, [operation])


def table(store: ShardStore, db: object) -> dict[tuple[str, int], set[int]]:
    with store.env.lmdb.begin() as txn:
        return {split_key(key): set(decode_bitmap(value)) for key, value in txn.cursor(db)}


def words_of(store: ShardStore) -> dict[str, set[int]]:
    merged: dict[str, set[int]] = {}
    for (word, _), docs in table(store, store.env.words).items():
        merged.setdefault(word, set()).update(docs)
    return merged


def test_bitmap_codec_round_trips_small_and_large_sets() -> None:
    for ids in ([], [7], list(range(8)), [3, 70_000], list(range(0, 100_000, 3)), [2**32 - 1]):
        assert list(decode_bitmap(encode_bitmap(BitMap(ids)))) == ids
    assert len(encode_bitmap(BitMap([5]))) == 3, "a single small id costs a tag byte and two bytes"
    assert len(encode_bitmap(BitMap([70_000]))) == 5


def test_marked_values_round_trip_and_cost_nothing_when_all_or_none_are_marked() -> None:
    large = BitMap(range(0, 90_000, 7))
    cases = [
        (BitMap([1, 5]), BitMap(), BitMap()),
        (BitMap([1, 5]), BitMap([1, 5]), BitMap([1, 5])),
        (large, large, BitMap([7, 14])),
        (large, BitMap([0, 70]), BitMap([70, 77])),
        (BitMap([3]), BitMap(), BitMap([3])),
        (large, large, BitMap()),
    ]
    for docs, starts, whole in cases:
        value = encode_marked(BitMap(docs), BitMap(starts), BitMap(whole))
        assert decode_bitmap(value) == docs
        assert decode_marked(value, None) == docs
        assert (decode_marked(value, START), decode_marked(value, WHOLE)) == (starts, whole)
        assert decode_all(value) == (docs, starts, whole)
    for docs in (BitMap([1, 5]), large):
        plain = encode_bitmap(BitMap(docs))
        assert len(encode_marked(BitMap(docs), BitMap(docs), BitMap(docs))) == len(plain)
        assert len(encode_marked(BitMap(docs), BitMap(docs), BitMap())) == len(plain)
        assert encode_marked(BitMap(docs), BitMap(), BitMap()) == plain


def test_first_words_and_one_word_fields_are_marked(store: ShardStore) -> None:
    add(
        store,
        1,
        [{"id": 1, "title": "Running apples", "tags": ["apple", "zebra"]}, {"id": 2, "title": "apple"}],
    )
    with store.env.lmdb.begin() as txn:
        marks = {
            split_key(key): (set(decode_marked(value, START)), set(decode_marked(value, WHOLE)))
            for key, value in txn.cursor(store.env.words)
        }
        prefixes = {
            split_key(key): set(decode_marked(value, START)) for key, value in txn.cursor(store.env.prefixes)
        }
        stems = {
            split_key(key): set(decode_marked(value, START)) for key, value in txn.cursor(store.env.stems)
        }
    assert marks[("running", 1)] == ({0}, set())
    assert marks[("apples", 1)] == (set(), set())
    assert marks[("apple", 1)] == ({1}, {1}), "a one-word field is its first word and its whole value"
    assert marks[("apple", 2)] == ({0}, set()), "an array's first element starts the field"
    assert marks[("zebra", 2)] == (set(), set())
    assert marks[("1", 0)] == ({0}, {0})
    assert prefixes[("ru", 1)] == {0} and prefixes[("a", 1)] == {1}
    assert stems[("run", 1)] == {0}, "the first word's stem starts the field too"


def test_words_prefixes_and_stems_are_posted_per_field(store: ShardStore) -> None:
    add(
        store,
        1,
        [{"id": 1, "title": "Running apples", "body": "The zebra runs."}, {"id": 2, "title": "apple"}],
    )
    words = table(store, store.env.words)
    fields = store.list_documents("x", 0, 10)[0]
    assert len(fields) == 2
    title_words = {word for (word, field), _ in words.items() if field == 1}
    assert {"running", "apples", "apple"} <= title_words
    assert words[("apple", 1)] == {1}
    assert words[("zebra", 2)] == {0}
    prefixes = table(store, store.env.prefixes)
    assert prefixes[("a", 1)] == {0, 1}
    assert prefixes[("ap", 1)] == {0, 1}
    assert prefixes[("ru", 2)] == {0}
    stems = table(store, store.env.stems)
    assert stems[("run", 1)] == {0}, "the English stem of running is an extra term"
    assert ("apple", 1) not in stems, "a stem equal to a word of the document is not repeated"


def test_update_and_delete_keep_postings_exact(store: ShardStore) -> None:
    add(store, 1, [{"id": 1, "t": "apple banana"}, {"id": 2, "t": "banana cherry"}])
    add(store, 2, [{"id": 1, "t": "cherry"}])
    assert words_of(store) == {"1": {0}, "2": {1}, "banana": {1}, "cherry": {0, 1}}
    add(store, 3, [{"id": 2, "extra": "zebra"}], mode="update")
    assert words_of(store)["zebra"] == {1}
    assert words_of(store)["banana"] == {1}
    store.apply_batch(4, [{"op": "deleteDocuments", "task": 4, "index": "x", "ids": ["1", "2"]}])
    for db in store.env.searchable:
        assert table(store, db) == {}


def test_settings_change_rebuilds_only_when_it_shapes_the_index(store: ShardStore) -> None:
    add(store, 1, [{"id": 1, "a": "apple", "b": "banana"}])
    base = {"searchableAttributes": ["*"], "displayedAttributes": ["*"], "stopWords": []}
    narrowed = {**base, "searchableAttributes": ["b"]}
    store.apply_batch(2, [{"op": "updateSettings", "task": 2, "index": "x", "settings": narrowed}])
    assert set(words_of(store)) == {"banana"}
    store.apply_batch(
        3, [{"op": "updateSettings", "task": 3, "index": "x", "settings": {**base, "stopWords": ["1"]}}]
    )
    assert set(words_of(store)) == {"apple", "banana"}, (
        "the id field is searchable but its word is a stop word"
    )


documents = st.fixed_dictionaries(
    {"id": st.integers(0, 7)},
    optional={
        "title": st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join),
        "tags": st.lists(st.sampled_from(WORDS), max_size=3),
    },
)
batches = st.lists(
    st.one_of(
        st.tuples(st.just("replace"), st.lists(documents, min_size=1, max_size=4)),
        st.tuples(st.just("update"), st.lists(documents, min_size=1, max_size=4)),
        st.tuples(st.just("delete"), st.lists(st.integers(0, 7), min_size=1, max_size=3)),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(batches)
def test_random_writes_keep_words_equal_to_a_rebuild_and_end_empty(
    steps: list[tuple[str, list[Any]]],
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        store = ShardStore(Path(scratch) / "shard")
        try:
            model: dict[str, dict[str, Any]] = {}
            for batch, (kind, items) in enumerate(steps, start=1):
                if kind == "delete":
                    ids = [str(item) for item in items]
                    store.apply_batch(
                        batch, [{"op": "deleteDocuments", "task": batch, "index": "x", "ids": ids}]
                    )
                    for external in ids:
                        model.pop(external, None)
                    continue
                add(store, batch, items, mode=kind)
                for doc in items:
                    key = str(doc["id"])
                    model[key] = {**model[key], **doc} if kind == "update" and key in model else doc
                assert _texts(store) == _model_words(model)
                assert _marks(store) == _model_marks(model)
            store.apply_batch(999, [{"op": "deleteDocuments", "task": 999, "index": "x", "ids": list(model)}])
            for db in store.env.searchable:
                assert table(store, db) == {}
        finally:
            store.close()


def _texts(store: ShardStore) -> dict[str, set[str]]:
    """Word -> external ids, read from the postings."""
    with store.env.lmdb.begin() as txn:
        external = {
            decode_u32(doc_id): key[4:].decode() for key, doc_id in txn.cursor(store.env.external_ids)
        }
    return {word: {external[d] for d in docs} for word, docs in words_of(store).items()}


def _marks(store: ShardStore) -> dict[tuple[str, int], set[str]]:
    """(word, mark) -> external ids marked so in some field, read from the postings."""
    with store.env.lmdb.begin() as txn:
        external = {
            decode_u32(doc_id): key[4:].decode() for key, doc_id in txn.cursor(store.env.external_ids)
        }
        found: dict[tuple[str, int], set[str]] = {}
        for key, value in txn.cursor(store.env.words):
            word, _ = split_key(key)
            for mark in (START, WHOLE):
                docs = {external[d] for d in decode_marked(value, mark)}
                if docs:
                    found.setdefault((word, mark), set()).update(docs)
    return found


def _model_marks(model: dict[str, dict[str, Any]]) -> dict[tuple[str, int], set[str]]:
    found: dict[tuple[str, int], set[str]] = {}
    for key, doc in model.items():
        for values in ([str(doc["id"])], [doc.get("title", "")], doc.get("tags", [])):
            words = [word for value in values for word in ANALYZER.index_text(value)[0]]
            if words:
                found.setdefault((words[0], START), set()).add(key)
                if len(words) == 1:
                    found.setdefault((words[0], WHOLE), set()).add(key)
    return found


def _model_words(model: dict[str, dict[str, Any]]) -> dict[str, set[str]]:
    words: dict[str, set[str]] = {}
    for key, doc in model.items():
        text = " ".join([str(doc["id"]), doc.get("title", ""), *doc.get("tags", [])])
        for word in ANALYZER.index_text(text)[0]:
            words.setdefault(word, set()).add(key)
    return words


@pytest.mark.parametrize(
    ("change", "rebuild"),
    [
        ({"searchableAttributes": ["b", "a"]}, False),
        ({"searchableAttributes": ["a", "b", "c"]}, True),
        ({"searchableAttributes": ["*"]}, True),
        ({"displayedAttributes": ["a"]}, False),
        ({"synonyms": {"a": ["b"]}}, False),
        ({"rankingRules": ["words"]}, False),
        ({"typoTolerance": {"enabled": False, "disableOnNumbers": True}}, False),
        ({"proximityPrecision": "byAttribute"}, False),
        ({"prefixSearch": "disabled"}, False),
        ({"stopWords": ["the"]}, True),
        ({"separatorTokens": ["|"]}, True),
        ({"nonSeparatorTokens": ["@"]}, True),
        ({"dictionary": ["C++"]}, True),
        ({"localizedAttributes": [{"attributePatterns": ["a"], "locales": ["fr"]}]}, True),
    ],
)
def test_only_settings_that_shape_postings_rebuild_them(change: dict[str, Any], rebuild: bool) -> None:
    base = {"searchableAttributes": ["a", "b"]}
    assert needs_rebuild(base, {**base, **change}) is rebuild
