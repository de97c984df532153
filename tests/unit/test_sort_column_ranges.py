"""Numeric ranges answered from a sort column must equal the facet-key scan they replace."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shard.facet.column import numbers_between, sort_column
from shard.facet.reader import FacetReader
from shard.index import catalog
from shard.index.state import load_state
from shard.store import ShardStore

_NUMBERS = st.sampled_from([-5, -1.5, 0, 1, 2, 2.5, 3, 10, 1e6])
_VALUES = st.one_of(
    st.none(),
    _NUMBERS,
    st.sampled_from(["a", "10", "zz"]),
    st.lists(st.one_of(_NUMBERS, st.just("b")), max_size=3),
)
_BOUNDS = st.one_of(st.none(), st.sampled_from([-5, -2, 0, 1, 1.5, 2.5, 3, 11, 1e6]))


def _documents(values: list[Any]) -> list[list[Any]]:
    documents = [{"id": i} if value is None else {"id": i, "n": value} for i, value in enumerate(values)]
    return [[str(i), document, i] for i, document in enumerate(documents)]


@settings(max_examples=150, deadline=None)
@given(values=st.lists(_VALUES, min_size=1, max_size=12), low=_BOUNDS, high=_BOUNDS, strict=st.booleans())
def test_column_range_equals_key_scan(
    values: list[Any], low: float | None, high: float | None, strict: bool
) -> None:
    if strict and low is not None and high is not None:
        strict = False  # the operators giving both bounds (TO) are inclusive
    with tempfile.TemporaryDirectory() as tmp:
        store = ShardStore(Path(tmp))
        try:
            filterable = {"filterableAttributes": ["n"]}
            documents = _documents(values)
            operations = [
                {"op": "updateSettings", "task": 1, "index": "i", "settings": filterable},
                {"op": "addDocuments", "task": 2, "index": "i", "mode": "replace", "documents": documents},
            ]
            store.apply_batch(1, operations)
            with store.env.lmdb.begin() as txn:
                index_id = catalog.lookup(store.env, txn, "i")
                assert index_id is not None
                reader = FacetReader(txn, store.env.facets, index_id, load_state(store.env, txn, index_id))
                prefix = reader.field("n")
                if prefix is None:
                    return
                scanned = reader.numbers(prefix, low, high, strict=strict)
                found = numbers_between(sort_column(reader, "n", None), low, high, strict=strict)
        finally:
            store.close()
    if found is not None:
        assert found == scanned
    else:  # only documents with several numbers around the range are left to the keys
        assert any(isinstance(value, list) and len(value) > 1 for value in values)
