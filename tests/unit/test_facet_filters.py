"""Facet values on a shard and filter trees evaluated on them (search.md §4.3), with hand-built trees.

Expected ids are written from the contract. The store is driven through batches like the scheduler
does, so incremental updates and settings rebuilds are covered with the same assertions.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from common.filter.ast import (
    And,
    Between,
    Compare,
    CompareOp,
    Contains,
    Exists,
    Filter,
    GeoPolygon,
    GeoRadius,
    In,
    IsEmpty,
    IsNull,
    Not,
    Or,
    Span,
    StartsWith,
    Token,
)
from shard.facet.reader import FacetReader
from shard.filter.evaluate import FilterEvaluator
from shard.geo.filters import GeoFilters
from shard.index import catalog
from shard.index.env import index_prefix
from shard.index.facet_keys import encode_number
from shard.index.settings import load_settings
from shard.index.state import load_state
from shard.store import ShardStore
from shard.vector.filters import vector_filter
from tests.support.shard_batches import apply

_SPAN = Span(1, 2)

DOCS: list[dict[str, Any]] = [
    {"id": 1, "genre": "Action", "year": 2004, "tags": ["Café", "b"], "rating": {"users": 7.5}},
    {"id": 2, "genre": " action ", "year": "2004", "tags": [], "rating": {"users": 3}},
    {"id": 3, "genre": "Drama", "year": 1999.5, "tags": "cafe", "rating": None},
    {"id": 4, "genre": None, "year": -3, "tags": [None, ""], "rating": {}},
    {"id": 5, "genre": "", "tags": ["x", ["nested", 12]], "flag": True},
    {"id": 6, "genre": ["comedy", "Drama"], "year": 1e300, "flag": False, "rating": [{"users": 9}]},
    {"id": 7},
]
FILTERABLE = ["genre", "year", "tags", "rating", "flag"]


def tok(text: str) -> Token:
    return Token(text, _SPAN)


def cmp(field: str, op: CompareOp, value: str) -> Compare:
    return Compare(tok(field), op, tok(value))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ShardStore]:
    opened = ShardStore(tmp_path / "store")
    settings(opened, FILTERABLE)
    apply(opened, add(*DOCS))
    yield opened
    opened.close()


def add(*docs: dict[str, Any], mode: str = "replace") -> dict[str, Any]:
    entries = [[str(doc["id"]), doc, position] for position, doc in enumerate(docs)]
    return {"op": "addDocuments", "task": 1, "index": "i", "mode": mode, "documents": entries}


def settings(store: ShardStore, filterable: list[Any], sortable: list[str] | None = None) -> None:
    values = {"filterableAttributes": filterable, "sortableAttributes": sortable or []}
    apply(store, {"op": "updateSettings", "task": 1, "index": "i", "settings": values})


def ids(store: ShardStore, tree: Filter) -> list[int]:
    with store.env.lmdb.begin() as txn:
        index_id = catalog.lookup(store.env, txn, "i")
        assert index_id is not None
        state = load_state(store.env, txn, index_id)
        reader = FacetReader(txn, store.env.facets, index_id, state)
        geo = GeoFilters(reader, store.env.shapes, index_id, load_settings(store.env, txn, index_id), None)
        vectors = partial(vector_filter, store.env, txn, index_id, {})
        docs = FilterEvaluator(reader, state.live, geo, vectors).evaluate(tree)
        external = {doc_id: doc["id"] for doc_id, doc in _internal_docs(store)}
        return sorted(external[doc_id] for doc_id in docs)


def _internal_docs(store: ShardStore) -> list[tuple[int, dict[str, Any]]]:
    # Internal ids follow insertion order in a fresh index: the n-th live id holds the n-th document.
    documents = [doc for _, doc in store.list_documents("i", 0, 1000)[0]]
    with store.env.lmdb.begin() as txn:
        index_id = catalog.lookup(store.env, txn, "i")
        assert index_id is not None
        live = load_state(store.env, txn, index_id).live
    return list(zip(live, documents, strict=True))


@pytest.mark.parametrize(
    ("tree", "expected"),
    [
        (cmp("genre", "=", "ACTION"), [1, 2]),
        (cmp("genre", "=", "drama"), [3, 6]),
        (cmp("year", "=", "2004"), [1, 2]),
        (cmp("year", "=", "2004.0"), [1]),
        (cmp("tags", "=", "café"), [1]),
        (cmp("tags", "=", "cafe"), [3]),
        (cmp("tags", "=", "12"), [5]),
        (cmp("flag", "=", "true"), [5]),
        (cmp("rating.users", "=", "9"), [6]),
        (cmp("genre", "!=", "action"), [3, 4, 5, 6, 7]),
        (cmp("nowhere", "=", "1"), []),
        (cmp("nowhere", "!=", "1"), [1, 2, 3, 4, 5, 6, 7]),
        (cmp("year", ">", "2000"), [1, 2, 6]),
        (cmp("year", ">=", "2004"), [1, 2, 6]),
        (cmp("year", "<", "0"), [4]),
        (cmp("year", "<=", "1999.5"), [3, 4]),
        (cmp("genre", ">", "b"), [3, 6]),
        (cmp("genre", "<", "b"), [1, 2]),
        (Between(tok("year"), tok("-3"), tok("2004")), [1, 2, 3, 4]),
        (Between(tok("year"), tok("2004"), tok("-3")), []),
        (Between(tok("genre"), tok("a"), tok("comedy")), [1, 2, 6]),
        (In(tok("genre"), (tok("COMEDY"), tok("action"))), [1, 2, 6]),
        (Not(In(tok("genre"), (tok("comedy"), tok("action")))), [3, 4, 5, 7]),
        (In(tok("genre"), ()), []),
        (Exists(tok("genre")), [1, 2, 3, 4, 5, 6]),
        (Exists(tok("rating")), [1, 2, 3, 4, 6]),
        (Exists(tok("rating.users")), [1, 2, 6]),
        (Not(Exists(tok("year"))), [5, 7]),
        (IsNull(tok("genre")), [4]),
        (IsNull(tok("rating")), [3]),
        (IsNull(tok("tags")), []),
        (IsEmpty(tok("genre")), [5]),
        (IsEmpty(tok("tags")), [2]),
        (IsEmpty(tok("rating")), [4]),
        (Not(IsEmpty(tok("tags"))), [1, 3, 4, 5, 6, 7]),
        (Contains(tok("tags"), tok("AF")), [1, 3]),
        (Contains(tok("tags"), tok("12")), []),
        (StartsWith(tok("genre"), tok("Dr")), [3, 6]),
        (StartsWith(tok("genre"), tok("")), [1, 2, 3, 4, 5, 6]),
        (And((cmp("genre", "=", "drama"), cmp("year", "<", "2000"))), [3]),
        (Or((cmp("genre", "=", "comedy"), IsNull(tok("genre")))), [4, 6]),
        (And((cmp("genre", "=", "none"), cmp("year", "=", "1"))), []),
        (Not(Not(cmp("flag", "=", "false"))), [6]),
    ],
)
def test_operator(store: ShardStore, tree: Filter, expected: list[int]) -> None:
    assert ids(store, tree) == expected


def test_geo_radius_without_points_matches_nothing(store: ShardStore) -> None:
    assert ids(store, GeoRadius(1.0, 2.0, 3.0, None, _SPAN)) == []


def test_geo_polygon_without_geojson_matches_nothing(store: ShardStore) -> None:
    assert ids(store, GeoPolygon(((1.0, 2.0), (3.0, 4.0), (5.0, 6.0)), _SPAN)) == []


def test_updates_and_deletions_move_values(store: ShardStore) -> None:
    apply(store, add({"id": 1, "genre": "horror"}, mode="update"), add({"id": 3, "year": 5}))
    assert ids(store, cmp("genre", "=", "action")) == [2]
    assert ids(store, cmp("genre", "=", "horror")) == [1]
    assert ids(store, cmp("year", "=", "2004")) == [1, 2]
    assert ids(store, Exists(tok("genre"))) == [1, 2, 4, 5, 6]
    apply(store, {"op": "deleteDocuments", "task": 2, "index": "i", "ids": ["1", "2"]})
    assert ids(store, cmp("year", "=", "2004")) == []
    assert ids(store, cmp("genre", "!=", "horror")) == [3, 4, 5, 6, 7]


def test_same_document_written_twice_in_a_batch(store: ShardStore) -> None:
    apply(store, add({"id": 8, "genre": "a"}), add({"id": 8, "genre": "b"}))
    assert ids(store, cmp("genre", "=", "a")) == []
    assert ids(store, cmp("genre", "=", "b")) == [8]


def test_settings_change_rebuilds_facets(store: ShardStore) -> None:
    settings(store, [{"attributePatterns": ["rat*"], "features": {"filter": {"equality": True}}}])
    assert ids(store, cmp("genre", "=", "action")) == []
    assert ids(store, cmp("rating.users", ">", "5")) == [1, 6]
    settings(store, [], sortable=["year"])
    assert ids(store, cmp("year", "=", "-3")) == [4]
    assert ids(store, Exists(tok("rating"))) == []
    settings(store, [])
    with store.env.lmdb.begin() as txn:
        assert not any(key.startswith(index_prefix(0)) for key, _ in txn.cursor(store.env.facets))


def test_rule_without_filter_features_is_not_faceted(store: ShardStore) -> None:
    rule = {"attributePatterns": ["genre"], "features": {"filter": {"equality": False, "comparison": False}}}
    settings(store, [rule, "genre", "year"])
    assert ids(store, Exists(tok("genre"))) == []
    assert ids(store, Exists(tok("year"))) == [1, 2, 3, 4, 6]


def test_numbers_keep_their_order_in_keys() -> None:
    values = [-1e308, -2.5, -1.0, -0.0, 0.0, 1e-300, 1.0, 2.5, 1e308]
    encoded = [encode_number(value) for value in values]
    assert encoded == sorted(encoded)
    assert encode_number(-0.0) == encode_number(0.0)
