"""Facet search keeps each field's search forms in the read cache for a generation: later prefixes are
bisections, and a batch that adds or removes values is seen by the next search."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shard.index.read_cache import FACET_FORMS
from shard.store import ShardStore
from tests.support.shard_batches import add_values, apply


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ShardStore]:
    opened = ShardStore(tmp_path / "store")
    settings = {"filterableAttributes": ["name"]}
    apply(opened, {"op": "updateSettings", "task": 1, "index": "i", "settings": settings})
    yield opened
    opened.close()


def add(store: ShardStore, *names: str, first: int = 0) -> None:
    add_values(store, "i", "name", *names, first=first)


def found(store: ShardStore, query: str) -> list[str]:
    request = {"facetName": "name", "facetQuery": query}
    result = store.search("i", {"q": "", "limit": 0, "facetSearch": request})
    assert result is not None and result.facets is not None
    return sorted(hit[3] for hit in result.facets["hits"])


def cached_forms(store: ShardStore) -> int:
    return sum(1 for key in store.cache._entries if key[0] == FACET_FORMS)


def test_forms_are_built_once_per_generation_and_follow_batches(store: ShardStore) -> None:
    add(store, "Ängel", "Angus", "Bergen", "Ångström")
    assert cached_forms(store) == 0
    assert found(store, "ang") == ["Angus", "Ängel", "Ångström"]
    assert cached_forms(store) == 1
    assert found(store, "ber") == ["Bergen"]
    assert cached_forms(store) == 1
    add(store, "Angers", first=10)
    assert found(store, "ange") == ["Angers", "Ängel"]
    apply(store, {"op": "deleteDocuments", "task": 3, "index": "i", "ids": ["1"]})
    assert found(store, "ang") == ["Angers", "Ängel", "Ångström"]
