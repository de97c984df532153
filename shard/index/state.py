"""Per-index bookkeeping: which internal ids are live, and the counters behind the stats route.

The state is read once per batch, changed in memory, and written back once before the commit, so a
batch of 100k documents serialises the bitmap once rather than per document.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from pyroaring import BitMap

from shard.index.env import StoreEnv, Txn, index_prefix

_LIVE = b"live"
_STATS = b"stats"


@dataclass
class IndexState:
    """One index's live ids and stats counters, as of the current point of a batch."""

    live: BitMap = field(default_factory=BitMap)
    raw_size: int = 0
    """Bytes of the stored documents' JSON, before block compression."""
    fields: dict[str, int] = field(default_factory=dict)
    """Top-level field name -> number of documents having it."""
    field_names: list[str] = field(default_factory=list)
    """Indexed (dotted) field paths in discovery order; a path's index is its id in the postings keys."""
    facet_fields: list[str] = field(default_factory=list)
    """Faceted (dotted) field paths in discovery order; a path's index is its id in the facet keys.
    Separate from ``field_names`` so that rebuilding postings and rebuilding facets each renumber
    only their own keys."""
    field_tokens: list[int] = field(default_factory=list)
    """Indexed words the live documents' token records hold per field id (``field_names``' ids): the
    average field lengths of the ``bm25`` matching strategy (``shard/query/ranking/bm25.py``)."""
    _field_ids: dict[str, int] | None = field(default=None, init=False, repr=False, compare=False)
    _facet_ids: dict[str, int] | None = field(default=None, init=False, repr=False, compare=False)

    def allocate(self) -> int:
        """One past the highest live id, so that id order is sequence order among live documents.

        Documents are created in increasing sequence (tasks apply in uid order, a task's documents in
        payload order), so the new one follows every live one in both orders. The only ids reused are
        those above every live id (the newest documents were deleted, or all of them), which keeps the
        order without a persisted counter; a counter would restart too once the index empties, since
        an empty index keeps no state.
        """
        doc_id = self.live.max() + 1 if self.live else 0
        self.live.add(doc_id)
        return doc_id

    def field_id(self, name: str) -> int:
        """The id of an indexed field path, registering it on first sight."""
        if self._field_ids is None:
            self._field_ids = _ids_of(self.field_names)
        return _register(self.field_names, self._field_ids, name)

    def facet_field_id(self, name: str) -> int:
        """The id of a faceted field path, registering it on first sight."""
        if self._facet_ids is None:
            self._facet_ids = _ids_of(self.facet_fields)
        return _register(self.facet_fields, self._facet_ids, name)

    def known_facet_field(self, name: str) -> int | None:
        """The id of a faceted field path, None when no document of the index had it."""
        if self._facet_ids is None:
            self._facet_ids = _ids_of(self.facet_fields)
        return self._facet_ids.get(name)

    def count_fields(self, document: dict[str, Any], delta: int) -> None:
        for name in document:
            count = self.fields.get(name, 0) + delta
            if count:
                self.fields[name] = count
            else:
                del self.fields[name]


    def count_tokens(self, lengths: Iterable[tuple[int, int]], sign: int) -> None:
        """Add (``sign`` 1) or remove (-1) a token record's (field id, word count) pairs."""
        totals = self.field_tokens
        for field_id, length in lengths:
            if field_id >= len(totals):
                totals.extend([0] * (field_id + 1 - len(totals)))
            totals[field_id] += sign * length


def _ids_of(names: list[str]) -> dict[str, int]:
    return {name: field_id for field_id, name in enumerate(names)}


def _register(names: list[str], ids: dict[str, int], name: str) -> int:
    field_id = ids.get(name)
    if field_id is None:
        field_id = ids[name] = len(names)
        names.append(name)
    return field_id


def load_state(env: StoreEnv, txn: Txn, index_id: int) -> IndexState:
    prefix = index_prefix(index_id)
    live = txn.get(prefix + _LIVE, db=env.index_state)
    stats = txn.get(prefix + _STATS, db=env.index_state)
    if live is None or stats is None:
        return IndexState()
    counters = orjson.loads(stats)
    return IndexState(
        BitMap.deserialize(live),
        counters["rawSize"],
        counters["fields"],
        counters.get("fieldNames", []),
        counters.get("facetFields", []),
        counters.get("fieldTokens", []),
    )


def save_state(env: StoreEnv, txn: Txn, index_id: int, state: IndexState) -> None:
    """An index without documents keeps no state keys, so emptying it leaves nothing behind."""
    prefix = index_prefix(index_id)
    if not state.live:
        txn.delete(prefix + _LIVE, db=env.index_state)
        txn.delete(prefix + _STATS, db=env.index_state)
        return
    state.live.run_optimize()
    txn.put(prefix + _LIVE, state.live.serialize(), db=env.index_state)
    stats = {
        "rawSize": state.raw_size,
        "fields": state.fields,
        "fieldNames": state.field_names,
        "facetFields": state.facet_fields,
        "fieldTokens": state.field_tokens,
    }
    txn.put(prefix + _STATS, orjson.dumps(stats), db=env.index_state)
