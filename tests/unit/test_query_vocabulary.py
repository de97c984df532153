"""Vocabulary lookups on a real LMDB words table, checked against a brute-force reference.

The reference computes the contract's distance directly (optimal string alignment plus one for a
different first character, minimised over prefixes for a prefix term) over every word, so the
automaton walk and its seeks must find exactly what a full scan would, caps included.
"""

from __future__ import annotations

import itertools
import random
import string
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

from common.typo_caps import ONE_TYPO_LIMIT, TWO_TYPOS_LIMIT
from shard.index.env import StoreEnv, Txn
from shard.index.postings import encode_bitmap, term_keys
from shard.query.typos import typo_words
from shard.query.vocabulary import PREFIX_LIMIT, prefix_words, word_exists

LIMITS = {1: ONE_TYPO_LIMIT, 2: TWO_TYPOS_LIMIT}
# Non-ASCII letters of 2 and 3 UTF-8 bytes, and the code points either side of the surrogates the
# walk must step over when it seeks to a next character.
ALPHABET = "abcdeéßx中\ud7ff\ue000"
HELLO = ["hello", "helo", "hlelo", "jello", "hallo", "help", "hell", "hellos", "shello", "ello", "ehllo"]
HELLO += ["yellow", "world", "helloworld", "hhello", "éclair", "ßtraße", "中文"]
# Index 2 sits right after index 1 in key order, with near neighbours of index 1's words.
NEIGHBOURS = ["hellp", "hella", "hel", "jelly", "aaaa", "zzzz"]
Vocabulary = dict[str, dict[int, set[int]]]


@cache
def distances(query: str, word: str) -> tuple[int, int]:
    """Contract typos of ``word``, and of its best non-empty prefix, from one OSA table."""
    rows = [[max(i, j) if not i or not j else 0 for j in range(len(word) + 1)] for i in range(len(query) + 1)]
    for i, j in itertools.product(range(1, len(query) + 1), range(1, len(word) + 1)):
        cost = query[i - 1] != word[j - 1]
        best = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
        if i > 1 and j > 1 and query[i - 1] == word[j - 2] and query[i - 2] == word[j - 1]:
            best = min(best, rows[i - 2][j - 2] + 1)
        rows[i][j] = best
    penalty = query[:1] != word[:1]
    return rows[-1][-1] + penalty, min(rows[-1][1:]) + penalty


def expected(words: Iterable[str], query: str, max_typos: int, prefix: bool) -> list[tuple[str, int]]:
    counts = dict.fromkeys(LIMITS, 0)
    kept = []
    for word in sorted(set(words)):
        found = distances(query, word)[prefix]
        if 1 <= found <= max_typos and counts[found] < LIMITS[found]:
            counts[found] += 1
            kept.append((word, found))
    return kept


def store(env: StoreEnv, index_id: int, vocabulary: Vocabulary) -> None:
    with env.lmdb.begin(write=True) as txn:
        for word, fields in vocabulary.items():
            for field_id, docs in fields.items():
                [key] = term_keys(index_id, [word], field_id)
                txn.put(key, encode_bitmap(BitMap(docs)), db=env.words)


def plain(words: Iterable[str]) -> Vocabulary:
    return {word: {0: {1}} for word in words}


@pytest.fixture
def env(tmp_path: Path) -> Iterator[StoreEnv]:
    opened = StoreEnv(tmp_path)
    vocabulary = plain(HELLO)
    vocabulary["hallo"] = {0: {1}, 3: {2}, 7: {3}}
    store(opened, 1, vocabulary)
    store(opened, 2, plain(NEIGHBOURS))
    yield opened
    opened.close()


def lookup(env: StoreEnv, index_id: int, word: str, max_typos: int, prefix: bool) -> list[tuple[str, int]]:
    with env.lmdb.begin() as txn:
        return typo_words(txn, env.words, index_id, word, max_typos, prefix=prefix)


def test_one_typo_needs_the_same_first_character(env: StoreEnv) -> None:
    found = lookup(env, 1, "hello", 1, False)
    assert found == [("hallo", 1), ("hell", 1), ("hellos", 1), ("helo", 1), ("hhello", 1), ("hlelo", 1)]


def test_a_changed_first_character_costs_two(env: StoreEnv) -> None:
    found = dict(lookup(env, 1, "hello", 2, False))
    # Substituted, inserted, deleted and transposed first characters: one edit, two typos.
    assert [found[word] for word in ("jello", "shello", "ello", "ehllo")] == [2, 2, 2, 2]
    assert found["help"] == 2 and found["helo"] == 1 and found["hhello"] == 1
    assert "yellow" not in found and "hello" not in found
    assert lookup(env, 1, "hello", 2, False) == expected(HELLO, "hello", 2, False)


def test_prefix_typos_are_measured_on_the_best_prefix(env: StoreEnv) -> None:
    assert lookup(env, 1, "hell", 1, True) == [
        ("hallo", 1),
        ("helo", 1),
        ("help", 1),
        ("hhello", 1),
        ("hlelo", 1),
    ]
    found = dict(lookup(env, 1, "hello", 1, True))
    assert "hellos" not in found and "helloworld" not in found  # they start with the word
    assert found["hell"] == 1
    assert lookup(env, 2, "hellow", 2, True) == [("hella", 2), ("hellp", 2)]


def test_indexes_are_isolated(env: StoreEnv) -> None:
    assert lookup(env, 2, "hello", 2, False) == [("hel", 2), ("hella", 1), ("hellp", 1)]
    assert lookup(env, 3, "hello", 2, True) == []
    assert lookup(env, 0, "hello", 2, True) == []
    with env.lmdb.begin() as txn:
        assert prefix_words(txn, env.words, 1, "hel") == [
            "hell",
            "hello",
            "hellos",
            "helloworld",
            "helo",
            "help",
        ]
        assert prefix_words(txn, env.words, 2, "hel") == ["hel", "hella", "hellp"]
        assert prefix_words(txn, env.words, 2, "") == sorted(NEIGHBOURS)
        assert word_exists(txn, env.words, 2, "hel") and not word_exists(txn, env.words, 1, "hel")
        assert word_exists(txn, env.words, 1, "hell") and not word_exists(txn, env.words, 2, "hell")


def test_the_exact_word_is_left_to_the_caller(env: StoreEnv) -> None:
    assert "hallo" not in dict(lookup(env, 1, "hallo", 2, False))
    assert "hallo" not in dict(lookup(env, 1, "hallo", 2, True))


def test_a_word_in_several_fields_is_found_once(env: StoreEnv) -> None:
    assert [word for word, _ in lookup(env, 1, "hello", 1, False)].count("hallo") == 1
    assert [word for word, _ in lookup(env, 1, "hellu", 1, True)].count("hallo") == 0
    assert [word for word, _ in lookup(env, 1, "halo", 1, True)].count("hallo") == 1
    assert [word for word, _ in lookup(env, 1, "hellu", 2, True)].count("hallo") == 1
    assert [word for word, _ in lookup(env, 1, "hall", 1, True)] == ["hell", "hello", "hellos", "helloworld"]
    with env.lmdb.begin() as txn:
        assert prefix_words(txn, env.words, 1, "ha") == ["hallo"]


def test_non_ascii_words(env: StoreEnv) -> None:
    assert lookup(env, 1, "eclair", 2, False) == [("éclair", 2)]
    assert lookup(env, 1, "ßtrase", 1, False) == [("ßtraße", 1)]
    assert lookup(env, 1, "中字", 2, True) == [("中文", 1)]
    with env.lmdb.begin() as txn:
        assert prefix_words(txn, env.words, 1, "中") == ["中文"]
        assert prefix_words(txn, env.words, 1, "é") == ["éclair"]


def test_degenerate_arguments(env: StoreEnv) -> None:
    assert lookup(env, 1, "hello", 0, False) == []
    assert lookup(env, 1, "", 2, True) == []
    with pytest.raises(ValueError):
        lookup(env, 1, "hello", 3, False)
    with env.lmdb.begin() as txn:
        assert prefix_words(txn, env.words, 1, "hel", limit=2) == ["hell", "hello"]
        assert prefix_words(txn, env.words, 1, "hel", limit=0) == []
        assert prefix_words(txn, env.words, 1, "q") == []


class CountingCursor:
    """Counts the keys a lookup reads, to prove it does not scan the vocabulary."""

    def __init__(self, cursor: Any, reads: list[int]) -> None:
        self._cursor = cursor
        self._reads = reads

    def set_range(self, key: bytes) -> bool:
        self._reads[0] += 1
        return bool(self._cursor.set_range(key))

    def key(self) -> bytes:
        return bytes(self._cursor.key())


class CountingTxn:
    def __init__(self, txn: Txn) -> None:
        self._txn = txn
        self.reads = [0]

    def cursor(self, db: Any) -> CountingCursor:
        return CountingCursor(self._txn.cursor(db), self.reads)


def random_words(rng: random.Random, count: int, letters: str = string.ascii_lowercase) -> set[str]:
    words: set[str] = set()
    while len(words) < count:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return words


def test_lookups_read_a_small_part_of_the_vocabulary(tmp_path: Path) -> None:
    env = StoreEnv(tmp_path)
    words = random_words(random.Random(7), 20_000)
    store(env, 1, plain(words))
    query = sorted(words)[1234]
    with env.lmdb.begin() as txn:
        for max_typos, prefix in itertools.product((1, 2), (False, True)):
            counting = CountingTxn(txn)
            found = typo_words(cast(Txn, counting), env.words, 1, query, max_typos, prefix=prefix)
            assert found == expected(words, query, max_typos, prefix)
            assert counting.reads[0] < len(words) // (10 if max_typos == 1 else 4)
    env.close()


def test_caps_keep_the_first_words_in_key_order(tmp_path: Path) -> None:
    env = StoreEnv(tmp_path)
    query = "abcdefgh"
    letters = string.ascii_lowercase
    one = {query[:i] + c + query[i + 1 :] for i in range(1, 8) for c in letters}
    two = {c + query[1:] for c in letters} | {query[:3] + c + d + query[5:] for c in letters for d in letters}
    longer = {query[:7] + c + d for c in letters for d in letters}
    words = (one | two | longer) - {query}
    store(env, 1, plain(words))
    with env.lmdb.begin() as txn:
        for prefix in (False, True):
            found = typo_words(txn, env.words, 1, query, 2, prefix=prefix)
            assert found == expected(words, query, 2, prefix)
            assert sum(typos == 1 for _, typos in found) == ONE_TYPO_LIMIT
            assert sum(typos == 2 for _, typos in found) == TWO_TYPOS_LIMIT
            assert typo_words(txn, env.words, 1, query, 2, prefix=prefix) == found
        one_only = typo_words(txn, env.words, 1, query, 1, prefix=False)
        assert one_only == expected(words, query, 1, False) and len(one_only) == ONE_TYPO_LIMIT
        expanded = prefix_words(txn, env.words, 1, "a")
        assert expanded == sorted(words)[:PREFIX_LIMIT]
    env.close()


def test_larger_random_vocabulary_matches_brute_force(tmp_path: Path) -> None:
    env = StoreEnv(tmp_path)
    rng = random.Random(11)
    words = random_words(rng, 2000, ALPHABET)
    store(env, 1, plain(words))
    queries = [*rng.sample(sorted(words), 12), *random_words(rng, 12, ALPHABET)]
    with env.lmdb.begin() as txn:
        for query, max_typos, prefix in itertools.product(queries, (1, 2), (False, True)):
            found = typo_words(txn, env.words, 1, query, max_typos, prefix=prefix)
            assert found == expected(words, query, max_typos, prefix), (query, max_typos, prefix)
    env.close()


@pytest.fixture(scope="module")
def shared_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StoreEnv]:
    opened = StoreEnv(tmp_path_factory.mktemp("vocabulary"))
    yield opened
    opened.close()


_index_ids = itertools.count(1)
small_words = st.text(ALPHABET, min_size=1, max_size=7)


@settings(max_examples=150, deadline=None)
@given(
    words=st.sets(small_words, min_size=1, max_size=40),
    decoys=st.sets(small_words, max_size=10),
    query=small_words,
    max_typos=st.integers(1, 2),
    prefix=st.booleans(),
)
def test_typo_words_match_brute_force(
    shared_env: StoreEnv, words: set[str], decoys: set[str], query: str, max_typos: int, prefix: bool
) -> None:
    index_id = next(_index_ids)
    store(shared_env, 2 * index_id, plain(words))
    store(shared_env, 2 * index_id + 1, plain(decoys))
    with shared_env.lmdb.begin() as txn:
        assert typo_words(txn, shared_env.words, 2 * index_id, query, max_typos, prefix=prefix) == expected(
            words, query, max_typos, prefix
        )
        for start in {query[:1], query[:2], query, ""}:
            assert prefix_words(txn, shared_env.words, 2 * index_id, start) == sorted(
                word for word in words if word.startswith(start)
            )
        assert word_exists(txn, shared_env.words, 2 * index_id, query) == (query in words)


def test_words_longer_than_any_stored_word_have_no_typo_variants(env: StoreEnv) -> None:
    with env.lmdb.begin() as txn:
        for prefix in (False, True):
            assert typo_words(txn, env.words, 1, "a" * 1000, 2, prefix=prefix) == []
