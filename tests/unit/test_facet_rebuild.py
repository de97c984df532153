"""A ``filterableAttributes`` change updates a shard's facet keys in place (search.md §6 reindexing).

After any sequence of changes, interleaved with writes, the facet table must hold exactly what a
store given the final settings from the start holds (compared by field path, as field ids differ);
a features-only change must leave the table byte for byte as it was.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from shard.index import catalog
from shard.index.env import index_prefix
from shard.index.state import load_state
from shard.store import ShardStore
from tests.support.shard_batches import apply

RULES: list[Any] = [
    "color",
    "meta",
    "meta.shop",
    "size",
    {"attributePatterns": ["*e"], "features": {"filter": {"equality": True}}},
    {"attributePatterns": ["size"], "features": {"filter": {"equality": False}}},
    {"attributePatterns": ["tags"], "features": {"facetSearch": True, "filter": {"equality": False}}},
]


def _doc(rng: random.Random, doc_id: int) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": doc_id,
        "color": rng.choice(["Red", "red", "Blue"]),
        "size": rng.randint(1, 4),
    }
    if rng.random() < 0.5:
        doc["meta"] = {"shop": rng.choice(["N", "s"]), "stock": rng.choice([0, 1, None, ""])}
    if rng.random() < 0.5:
        doc["tags"] = rng.sample(["a", "b", "c"], 2)
    return doc


def _settings(filterable: list[Any], sortable: list[str]) -> dict[str, Any]:
    operation = {"filterableAttributes": filterable, "sortableAttributes": sortable}
    return {"op": "updateSettings", "task": 1, "index": "i", "settings": operation}


def _add(docs: list[dict[str, Any]]) -> dict[str, Any]:
    entries = [[str(doc["id"]), doc, position] for position, doc in enumerate(docs)]
    return {"op": "addDocuments", "task": 1, "index": "i", "mode": "replace", "documents": entries}


def _facets(store: ShardStore) -> tuple[dict[tuple[str, bytes], bytes], list[tuple[bytes, bytes]]]:
    """The facet keys by (field path, kind + value) -> stored bitmap, and the raw table."""
    with store.env.lmdb.begin() as txn:
        index_id = catalog.lookup(store.env, txn, "i")
        assert index_id is not None
        paths = load_state(store.env, txn, index_id).facet_fields
        prefix = index_prefix(index_id)
        raw = [(bytes(k), bytes(v)) for k, v in txn.cursor(store.env.facets) if k.startswith(prefix)]
    by_path = {(paths[int.from_bytes(k[4:6], "big")], k[6:]): v for k, v in raw}
    return by_path, raw


@pytest.mark.parametrize("seed", range(6))
def test_changes_end_where_a_fresh_build_does(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    writes = [_add([_doc(rng, i) for i in range(40)])]
    changed = ShardStore(tmp_path / "changed")
    apply(changed, writes[0])
    filterable: list[Any] = []
    sortable: list[str] = []
    for _ in range(6):
        filterable = rng.sample(RULES, rng.randint(0, 4))
        sortable = rng.sample(["size", "color"], rng.randint(0, 1))
        apply(changed, _settings(filterable, sortable))
        writes.append(_add([_doc(rng, rng.randint(0, 60)) for _ in range(5)]))
        apply(changed, writes[-1])
    # The same writes under the final settings from the start: the same internal ids.
    fresh = ShardStore(tmp_path / "fresh")
    apply(fresh, _settings(filterable, sortable))
    for write in writes:
        apply(fresh, write)
    assert _facets(changed)[0] == _facets(fresh)[0], (filterable, sortable)
    changed.close()
    fresh.close()


def test_features_only_change_leaves_the_table_untouched(tmp_path: Path) -> None:
    rng = random.Random(1)
    store = ShardStore(tmp_path / "store")
    apply(
        store,
        _settings(["color", {"attributePatterns": ["meta"]}], []),
        _add([_doc(rng, i) for i in range(30)]),
    )
    before = _facets(store)[1]
    assert before
    features = {"facetSearch": True, "filter": {"equality": False, "comparison": True}}
    apply(store, _settings(["color", {"attributePatterns": ["meta"], "features": features}], []))
    assert _facets(store)[1] == before
    store.close()
