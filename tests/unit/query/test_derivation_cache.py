"""Vocabulary lookups of a query's words (typos, stems, splits, prefixes) are kept in the read cache for a
generation: a query typed again (or its earlier words at the next keystroke) reuses them, and a batch that
changes the vocabulary is seen by the next search."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shard.index.read_cache import PHRASE_DOCS, PREFIX_WORDS, STEM_WORDS, TYPO_WORDS, WORD_SPLITS
from shard.store import ShardStore
from tests.support.shard_batches import add_values, apply


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ShardStore]:
    opened = ShardStore(tmp_path / "store")
    yield opened
    opened.close()


def add(store: ShardStore, *titles: str, first: int = 0) -> None:
    add_values(store, "i", "title", *titles, first=first)


def titles(store: ShardStore, query: str) -> list[str]:
    result = store.search("i", {"q": query, "limit": 20})
    assert result is not None
    return sorted(entry[4]["title"] for entry in result.entries)


def cached_lookups(store: ShardStore, kind: int = TYPO_WORDS) -> set[Any]:
    return {key[2] for key in store.cache._entries if key[0] == kind}


def test_lookups_are_cached_per_generation_and_follow_batches(store: ShardStore) -> None:
    add(store, "wonder years", "blue wander")
    assert titles(store, "wonderr") == ["wonder years"]
    assert cached_lookups(store) == {("wonderr", 1, True)}  # the last word is a prefix
    assert titles(store, "wonderr yers") == ["wonder years"]
    # Words long enough for typos, and their concatenation; "yers" is too short for one.
    assert cached_lookups(store) == {("wonderr", 1, True), ("wonderr", 1, False), ("wonderryers", 1, True)}
    assert titles(store, "wonderr") == ["wonder years"]  # served from the cache, same answer

    add(store, "wondery tales", first=10)
    assert cached_lookups(store) == set()  # the batch dropped them
    assert titles(store, "wonderr") == ["wonder years", "wondery tales"]
    apply(store, {"op": "deleteDocuments", "task": 3, "index": "i", "ids": ["0"]})
    assert titles(store, "wonderr") == ["wondery tales"]


def test_stem_lookups_are_cached_and_follow_batches(store: ShardStore) -> None:
    # Without typos (and so without splits) "happy" reaches "happiness" through their stem "happi" only.
    settings = {"typoTolerance": {"enabled": False}}
    apply(store, {"op": "updateSettings", "task": 1, "index": "i", "settings": settings})
    add(store, "happiness found")
    assert titles(store, "happy") == ["happiness found"]
    assert cached_lookups(store, STEM_WORDS) == {("happi", "eng")}
    add(store, "happied days", first=10)
    assert cached_lookups(store, STEM_WORDS) == set()
    assert titles(store, "happy") == ["happied days", "happiness found"]


def test_split_lookups_are_cached_and_follow_batches(store: ShardStore) -> None:
    add(store, "morning edition")
    assert titles(store, "newspaper") == []
    assert cached_lookups(store, WORD_SPLITS) == {"newspaper"}  # no split: kept as such too
    add(store, "daily news paper", first=10)
    assert titles(store, "newspaper") == ["daily news paper"]
    # The split's documents are kept too (checked in records), and dropped by the next batch.
    assert cached_lookups(store, PHRASE_DOCS) == {(("news", "paper"), None, True)}  # checked under the budget
    assert titles(store, "newspaper") == ["daily news paper"]
    add(store, "news paper of record", first=20)
    assert cached_lookups(store, PHRASE_DOCS) == set()
    assert titles(store, "newspaper") == ["daily news paper", "news paper of record"]


def test_prefix_lookups_are_cached_and_follow_batches(store: ShardStore) -> None:
    add(store, "star wars", "stellar")
    assert titles(store, "st") == ["star wars", "stellar"]
    assert titles(store, "sta") == ["star wars"]
    assert cached_lookups(store, PREFIX_WORDS) == {"st", "sta"}
    assert titles(store, "sta") == ["star wars"]  # served from the cache, same answer
    add(store, "stardust", first=10)
    assert cached_lookups(store, PREFIX_WORDS) == set()
    assert titles(store, "sta") == ["star wars", "stardust"]
