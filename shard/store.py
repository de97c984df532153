"""``ShardStore``: the shard's storage and search behind one facade, the one entry point the servicer uses."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pyroaring import BitMap

from common.features import NO_FEATURES, FilterFeatures
from common.timing import Steps, lap
from shard.filter.apply import FilterScope, filter_documents
from shard.index import catalog
from shard.index.batches import BatchResult, Operation, apply_batch, recorded_result
from shard.index.codec import DocumentCodec
from shard.index.documents import Document, read_document, read_documents, selected_ids
from shard.index.env import StoreEnv
from shard.index.geo_check import first_invalid
from shard.index.settings import load_settings
from shard.index.state import load_state
from shard.query.context import SearchContext
from shard.query.document_sort import SortedEntry, sorted_documents
from shard.query.read_cache import DEFAULT_BUDGET, ReadCache
from shard.query.search import SearchResult, search

LIGHT_DOCUMENTS = 10_000
"""The most documents of an index a shard holds for a search asking for no hits to run on its event
loop rather than the search thread (``ShardStore.light``)."""


def _never() -> bool:
    return False


class ShardStore:
    """Partition k of every index, in one LMDB environment under ``path``.

    Writes happen only through ``apply_batch``; reads each use their own read transaction, so they see
    a consistent snapshot and never block the writer.
    """

    def __init__(self, path: Path, cache_budget: int = DEFAULT_BUDGET, shards: int = 1) -> None:
        """``shards``: how many shards share each index (searches take this one's share of their
        index-wide budgets, ``SearchContext.share``)."""
        self.env = StoreEnv(path)
        self.codec = DocumentCodec()
        self.cache = ReadCache(cache_budget)
        self.shards = shards
        self._sizes: dict[str, tuple[int, int]] = {}
        """Index uid -> (cache generation, live documents), for ``light``."""

    def close(self) -> None:
        self.env.close()

    def apply_batch(
        self, batch_uid: int, operations: list[Operation], should_abort: Callable[[], bool] = _never
    ) -> BatchResult:
        try:
            return apply_batch(self.env, self.codec, batch_uid, operations, should_abort)
        finally:
            self.cache.invalidate()

    def applied_batch(self, batch_uid: int) -> BatchResult | None:
        with self.env.lmdb.begin() as txn:
            return recorded_result(self.env, txn, batch_uid)

    def index_exists(self, index_uid: str) -> bool:
        with self.env.lmdb.begin() as txn:
            return catalog.lookup(self.env, txn, index_uid) is not None

    def get_document(self, index_uid: str, external_id: str) -> Document | None:
        with self.env.lmdb.begin() as txn:
            index_id = catalog.lookup(self.env, txn, index_uid)
            if index_id is None:
                return None
            return read_document(self.env, self.codec, txn, index_id, external_id)

    def list_documents(
        self,
        index_uid: str,
        offset: int,
        limit: int,
        ids: list[str] | None = None,
        filter_: Any = None,
        features: FilterFeatures = NO_FEATURES,
    ) -> tuple[list[tuple[int, Document]], int]:
        """``(sequence, document)`` pairs in insertion order, and the total; see ``read_documents``.

        ``filter_`` is the route's filter (``invalid_document_filter``); ``features`` the experimental
        features it may use.
        """
        with self._read(index_uid, filter_, features) as read:
            if read is None:
                return [], 0
            scope, matching = read
            txn, index_id = scope.txn, scope.index_id
            return read_documents(self.env, self.codec, txn, index_id, offset, limit, ids, matching)

    def sort_documents(
        self,
        index_uid: str,
        sort: list[str],
        wanted: int,
        ids: list[str] | None = None,
        filter_: Any = None,
        features: FilterFeatures = NO_FEATURES,
    ) -> tuple[list[SortedEntry], int]:
        """The first ``wanted`` documents a read selects in ``sort`` order, with their merge keys, and
        the total (``document_sort.py``)."""
        with self._read(index_uid, filter_, features) as read:
            if read is None:
                return [], 0
            scope, matching = read
            ctx = SearchContext(
                self.env,
                self.codec,
                scope.txn,
                scope.index_id,
                index_uid,
                scope.settings,
                scope.state,
                cache_ref=scope.cached,
                shards=self.shards,
            )
            selected = selected_ids(self.env, scope.txn, scope.index_id, ids, matching, scope.state.live)
            return sorted_documents(ctx, selected, sort, wanted), len(selected)

    @contextmanager
    def _read(
        self, index_uid: str, filter_: Any, features: FilterFeatures
    ) -> Iterator[tuple[FilterScope, BitMap | None] | None]:
        """A document read's snapshot and the documents its filter matches (None: no filter); None when
        this shard has never held the index."""
        generation = self.cache.generation  # read before the snapshot, see ReadCache
        with self.env.lmdb.begin() as txn:
            index_id = catalog.lookup(self.env, txn, index_uid)
            if index_id is None:
                yield None
                return
            settings, state = load_settings(self.env, txn, index_id), load_state(self.env, txn, index_id)
            scope = FilterScope(self.env, txn, index_id, index_uid, settings, state, (self.cache, generation))
            yield scope, filter_documents(scope, filter_, code="invalid_document_filter", features=features)

    def light(self, index_uid: str, params: dict[str, Any]) -> bool:
        """Whether a search is cheap enough for the caller's thread: it asks for no hits (a facet
        search, a count round) and this shard holds at most ``LIGHT_DOCUMENTS`` of the index. On the
        sdk-fixtures books (13 documents) a facet search costs ~50 µs here, less than the hop to the
        search thread and back (~100-400 µs on a busy machine); on cities (85k documents a shard)
        one with a query costs ~6 ms. The size is read once per generation (batch)."""
        if params.get("limit") != 0 and not params.get("countTerms"):
            return False
        generation = self.cache.generation  # read before the snapshot, see ReadCache
        known = self._sizes.get(index_uid)
        if known is None or known[0] != generation:
            with self.env.lmdb.begin() as txn:
                index_id = catalog.lookup(self.env, txn, index_uid)
                size = 0 if index_id is None else len(load_state(self.env, txn, index_id).live)
            known = self._sizes[index_uid] = (generation, size)
        return known[1] <= LIGHT_DOCUMENTS

    def search(
        self, index_uid: str, params: dict[str, Any], steps: Steps | None = None
    ) -> SearchResult | None:
        """None when this shard has never held the index; ``steps`` times the search when given."""
        generation = self.cache.generation  # read before the snapshot, see ReadCache
        with self.env.lmdb.begin() as txn:
            index_id = catalog.lookup(self.env, txn, index_uid)
            if index_id is None:
                return None
            settings = load_settings(self.env, txn, index_id)
            cached = (self.cache, generation)
            lap(steps, "open snapshot")
            return search(
                self.env, self.codec, txn, index_id, index_uid, settings, params, cached, steps, self.shards
            )

    def check_documents(self, index_uid: str, request: dict[str, Any]) -> dict[str, Any]:
        """The first stored document whose ``_geo`` / ``_geojson`` is invalid; see ``geo_check.py``."""
        with self.env.lmdb.begin() as txn:
            index_id = catalog.lookup(self.env, txn, index_uid)
            if index_id is None:
                return {}
            return first_invalid(self.env, self.codec, txn, index_id, index_uid, request)

    def index_stats(self, index_uid: str) -> dict[str, Any]:
        """Read from counters kept by every write, so the cost does not grow with the index."""
        with self.env.lmdb.begin() as txn:
            index_id = catalog.lookup(self.env, txn, index_uid)
            if index_id is None:
                return {"numberOfDocuments": 0, "rawDocumentDbSize": 0, "fieldDistribution": {}}
            state = load_state(self.env, txn, index_id)
        return {
            "numberOfDocuments": len(state.live),
            "rawDocumentDbSize": state.raw_size,
            "fieldDistribution": dict(sorted(state.fields.items())),
        }

    def database_size(self) -> int:
        return (self.env.path / "data.mdb").stat().st_size
