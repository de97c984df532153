"""Typo lookups are kept in the read cache for a generation: a query typed again (or its earlier words
at the next keystroke) reuses them, and a batch that changes the vocabulary is seen by the next search."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shard.query.read_cache import TYPO_WORDS
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


def cached_lookups(store: ShardStore) -> set[Any]:
    return {key[2] for key in store.cache._entries if key[0] == TYPO_WORDS}


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
