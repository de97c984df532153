"""``ShardStore``: the shard's storage and search behind one facade, the one entry point the servicer uses."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from pyroaring import BitMap

from common.documents import extract_document_id
from common.documents.projection import VECTORS, vectors_field
from common.errors import ApiError
from common.features import NO_FEATURES, FilterFeatures
from common.lmdb_sizes import environment_sizes
from common.timing import Steps, lap
from shard.batches import BatchResult, Hold, Operation, apply_batch, recorded_result
from shard.filter.apply import FilterScope, filter_documents
from shard.held import BatchPhases
from shard.index import catalog, compaction, snapshot
from shard.index.codec import DocumentCodec
from shard.index.documents import Document, read_document, read_documents, selected_ids
from shard.index.env import StoreEnv, Txn, decode_u32, external_key
from shard.index.fields import load_fields
from shard.index.gate import EnvGate
from shard.index.geo_check import first_invalid
from shard.index.read_cache import DEFAULT_BUDGET, TABLE_SIZES, ReadCache, cached_value
from shard.index.settings import load_settings
from shard.index.sizes import index_table_sizes
from shard.index.state import load_state
from shard.query.context import SearchContext
from shard.query.document_sort import SortedEntry, sorted_documents
from shard.query.query_embedding import QueryEmbeddings
from shard.query.search import SearchResult, search
from shard.query.semantic import StoredSpace, embedder_settings
from shard.vector import VectorStore, document_vectors, embedder_stats
from shard.vector.prepared import PreparedEmbeddings
from shard.vector.reads import shown_vectors

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

    def __init__(
        self,
        path: Path,
        cache_budget: int = DEFAULT_BUDGET,
        shards: int = 1,
        embedding_cache: int = 0,
        accept_older: bool = False,
        results_budget: int = 0,
    ) -> None:
        """``shards``: how many shards share each index (searches take this one's share of their
        index-wide budgets, ``SearchContext.share``); ``embedding_cache``: query embeddings kept per
        embedder configuration (``--experimental-embedding-cache-entries``); ``accept_older``: open a
        store awaiting its ``upgradeDatabase`` task (``--experimental-dumpless-upgrade``);
        ``results_budget``: bytes of search replies kept (``--result-cache-size``, 0: none)."""
        compaction.discard_unfinished(path)
        self._gate = EnvGate(StoreEnv(path, accept_older))
        self._writing = threading.Lock()
        """Held by every write: batches and compactions, so none commits while the store is copied."""
        self.codec = DocumentCodec()
        self.cache = ReadCache(cache_budget)
        self.results = ReadCache(results_budget)
        """Search replies (``shard/search_results.py``), dropped with the read cache by every batch."""
        self.vectors = VectorStore(path / "vectors")
        """The in-memory vector spaces searches read (``shard/vector``), loaded from their checkpoints."""
        self.vectors.open(self.env)
        self.batches = BatchPhases(path / "prepared", self.apply_batch)
        """Batches in two phases, prepare then commit (``held.py``)."""
        self.shards = shards
        self.query_embeddings = QueryEmbeddings(embedding_cache)
        self._sizes: dict[str, tuple[int, int]] = {}
        """Index uid -> (cache generation, live documents), for ``light``."""

    def close(self) -> None:
        self.batches.drop(None)
        with self._writing:  # no batch changes a space while it is checkpointed
            self.vectors.close()
        self.env.close()

    @property
    def env(self) -> StoreEnv:
        """The current environment; it changes when a compaction swaps in its copy."""
        return self._gate.env

    @contextmanager
    def _snapshot(self) -> Iterator[tuple[StoreEnv, Txn]]:
        """A read transaction on the current environment, which no compaction closes meanwhile."""
        with self._gate.using() as env, env.lmdb.begin() as txn:
            yield env, txn

    def apply_batch(
        self,
        batch_uid: int,
        operations: list[Operation],
        should_abort: Callable[[], bool] = _never,
        steps: Steps | None = None,
        *,
        skip: frozenset[int] = frozenset(),
        embeddings: PreparedEmbeddings | None = None,
        hold: Hold | None = None,
    ) -> BatchResult:
        """A batch whose one operation is ``compactIndex`` compacts the store (``index/compaction.py``),
        one whose one operation is ``snapshot`` copies it for a snapshot (``index/snapshot.py``); any
        other applies its operations in one write transaction (``batches.py``; with ``hold``, left
        open until the decision)."""
        with self._writing:
            try:
                if len(operations) == 1 and operations[0]["op"] == "compactIndex":
                    return self._compact(batch_uid, operations[0]["task"])
                if len(operations) == 1 and operations[0]["op"] == "snapshot":
                    with self._gate.using() as env:
                        return snapshot.copy_store(env, Path(operations[0]["path"]), operations[0]["compact"])
                with self._gate.using() as env:
                    return apply_batch(
                        env,
                        self.codec,
                        batch_uid,
                        operations,
                        should_abort,
                        steps,
                        self.vectors,
                        skip=skip,
                        embeddings=embeddings,
                        hold=hold,
                    )
            finally:
                self.cache.invalidate()
                self.results.invalidate()

    def _compact(self, batch_uid: int, task_uid: int) -> BatchResult:
        recorded = self.applied_batch(batch_uid)
        if recorded is not None:
            return recorded
        with self._gate.using() as env:
            copied, result = compaction.compacted_copy(env, batch_uid, task_uid)
        self._gate.replace(partial(compaction.swap_in, copied=copied))
        return result

    def applied_batch(self, batch_uid: int) -> BatchResult | None:
        with self._snapshot() as (env, txn):
            return recorded_result(env, txn, batch_uid)

    def index_exists(self, index_uid: str) -> bool:
        with self._snapshot() as (env, txn):
            return catalog.lookup(env, txn, index_uid) is not None

    def get_document(self, index_uid: str, external_id: str) -> Document | None:
        with self._snapshot() as (env, txn):
            index_id = catalog.lookup(env, txn, index_uid)
            if index_id is None:
                return None
            return read_document(env, self.codec, txn, index_id, external_id)

    def show_vectors(
        self, index_uid: str, documents: list[Document], ids: list[str] | None, primary_key: str | None
    ) -> list[str]:
        """With ``retrieveVectors``: each document's ``_vectors`` becomes its own entries naming no
        embedder followed by every embedder's embeddings (``reads.py``), in place. Documents are found
        by their ``ids`` or, without, by their ``primary_key``. Returns the index's embedder names (the
        gateway keeps their entries when ``fields`` leaves ``_vectors`` out)."""
        with self._snapshot() as (env, txn):
            index_id = catalog.lookup(env, txn, index_uid)
            if index_id is None:
                return []
            embedders = load_settings(env, txn, index_id).get("embedders") or {}
            if not embedders:
                return []
            for position, document in enumerate(documents):
                external_id = ids[position] if ids is not None else None
                if external_id is None and primary_key is not None:
                    external_id = extract_document_id(document, primary_key)
                key = None if external_id is None else external_key(index_id, external_id)
                packed = None if key is None else txn.get(key, db=env.external_ids)
                doc_id = None if packed is None else decode_u32(packed)
                own = vectors_field(document)
                document[VECTORS] = shown_vectors(env, txn, index_id, embedders, doc_id, own)
            return list(embedders)

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
            return read_documents(scope.env, self.codec, txn, index_id, offset, limit, ids, matching)

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
                scope.env,
                self.codec,
                scope.txn,
                scope.index_id,
                index_uid,
                scope.settings,
                scope.state,
                cache_ref=scope.cached,
                shards=self.shards,
            )
            selected = selected_ids(scope.env, scope.txn, scope.index_id, ids, matching, scope.state.live)
            return sorted_documents(ctx, selected, sort, wanted), len(selected)

    @contextmanager
    def _read(
        self, index_uid: str, filter_: Any, features: FilterFeatures
    ) -> Iterator[tuple[FilterScope, BitMap | None] | None]:
        """A document read's snapshot and the documents its filter matches (None: no filter); None when
        this shard has never held the index."""
        generation = self.cache.generation  # read before the snapshot, see ReadCache
        with self._snapshot() as (env, txn):
            index_id = catalog.lookup(env, txn, index_uid)
            if index_id is None:
                yield None
                return
            settings, state = load_settings(env, txn, index_id), load_state(env, txn, index_id)
            scope = FilterScope(env, txn, index_id, None, settings, state, (self.cache, generation))
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
            with self._snapshot() as (env, txn):
                index_id = catalog.lookup(env, txn, index_uid)
                size = 0 if index_id is None else len(load_state(env, txn, index_id).live)
            known = self._sizes[index_uid] = (generation, size)
        return known[1] <= LIGHT_DOCUMENTS

    def search(
        self, index_uid: str, params: dict[str, Any], steps: Steps | None = None
    ) -> SearchResult | None:
        """None when this shard has never held the index; ``steps`` times the search when given."""
        generation = self.cache.generation  # read before the snapshot, see ReadCache
        with self._snapshot() as (env, txn):
            index_id = catalog.lookup(env, txn, index_uid)
            if index_id is None:
                return None
            settings = load_settings(env, txn, index_id)
            cached = (self.cache, generation)
            lap(steps, "open snapshot")
            vectors = partial(StoredSpace, self.vectors, env, txn)
            args = (env, self.codec, txn, index_id, index_uid, settings, params, cached, steps, self.shards)
            return search(*args, vectors=vectors)

    def check_documents(self, index_uid: str, request: dict[str, Any]) -> dict[str, Any]:
        """The first stored document whose ``_geo`` / ``_geojson`` is invalid; see ``geo_check.py``."""
        with self._snapshot() as (env, txn):
            index_id = catalog.lookup(env, txn, index_uid)
            if index_id is None:
                return {}
            return first_invalid(env, self.codec, txn, index_id, index_uid, request)

    def index_stats(self, index_uid: str, internal_sizes: bool = False) -> dict[str, Any]:
        """Read from counters kept by every write, so the cost does not grow with the index, except
        ``internal_sizes`` (``internalDatabaseSizes``: one scan of the index's keys, ``sizes.py``).

        ``numberOfEmbeddings`` / ``numberOfEmbeddedDocuments`` count the embedders' stored embeddings
        (a document counts once whatever the number of embedders holding it). A document's own
        ``_vectors`` entries naming no embedder are not embeddings of the index, as for the reference.
        """
        with self._snapshot() as (env, txn):
            index_id = catalog.lookup(env, txn, index_uid)
            if index_id is None:
                return {"numberOfDocuments": 0, "rawDocumentDbSize": 0, "fieldDistribution": {}}
            state = load_state(env, txn, index_id)
            embeddings, embedded = embedder_stats(env, txn, index_id)
        stats: dict[str, Any] = {
            "numberOfDocuments": len(state.live),
            "rawDocumentDbSize": state.raw_size,
            "numberOfEmbeddings": embeddings,
            "numberOfEmbeddedDocuments": embedded,
            # _vectors is not a field of the document (search.md §1.6): never counted as one
            "fieldDistribution": {
                field: count for field, count in sorted(state.fields.items()) if field != VECTORS
            },
        }
        if internal_sizes:
            # One scan per index and batch: 0.68 s on cities (171k documents, 2 shards), then cached.
            cached = (self.cache, self.cache.generation)  # read before the snapshot, see ReadCache
            with self._gate.using() as env, env.lmdb.begin(buffers=True) as view:
                stats["internalDatabaseSizes"] = cached_value(
                    cached,
                    (TABLE_SIZES, index_id, 0),
                    lambda: index_table_sizes(env, view, index_id),
                    lambda sizes: 100 * len(sizes),
                )
        return stats

    def document_counts(self) -> dict[str, int]:
        """Live documents per index on this shard (``meilisearch_index_docs_count``, summed by the
        gateway), read from the counters every write keeps."""
        with self._snapshot() as (env, txn):
            indexes = catalog.uids_by_id(env, txn)
            return {uid: len(load_state(env, txn, index_id).live) for index_id, uid in indexes.items()}

    def sizes(self) -> dict[str, int]:
        """``databaseSize`` and ``usedDatabaseSize`` of the shard's environment (``lmdb_sizes.py``)."""
        with self._gate.using() as env:
            return environment_sizes(env.lmdb, env.all_tables)

    def field_paths(self, index_uid: str) -> list[str]:
        """Every field path the index's documents ever had, sorted; empty if this shard never held it."""
        with self._snapshot() as (env, txn):
            index_id = catalog.lookup(env, txn, index_uid)
            if index_id is None:
                return []
            return sorted(load_fields(env, self.codec, txn, index_id).paths)

    def embed_query(
        self, index_uid: str, embedder: str, text: str, fragments: dict[str, Any] | None = None
    ) -> list[float] | None:
        """A semantic query's vector (``query_embedding.py``); None when this shard never held the
        index. ``fragments`` (``{"q", "media"}``): a search with ``media``, which a multimodal
        embedder's search fragment renders (as does ``text`` alone for such an embedder). The
        embedding runs after the snapshot is closed: a provider may take seconds."""
        with self._snapshot() as (env, txn):
            index_id = catalog.lookup(env, txn, index_uid)
            if index_id is None:
                return None
            config = embedder_settings(load_settings(env, txn, index_id), embedder, "invalid_search_embedder")
        return [float(value) for value in self.query_embeddings.embed(config, text, fragments)]

    def document_vector(
        self,
        index_uid: str,
        embedder: str,
        external_id: str,
        tenant_filter: Any = None,
        features: FilterFeatures = NO_FEATURES,
    ) -> dict[str, Any]:
        """/similar's target: ``{"indexFound", "vector"}``, its first embedding (None without one).
        An unknown embedder, then a document this shard does not hold or the tenant token's filter
        leaves out, is the contract's error."""
        generation = self.cache.generation  # read before the snapshot, see ReadCache
        with self._snapshot() as (env, txn):
            index_id = catalog.lookup(env, txn, index_uid)
            if index_id is None:
                return {"indexFound": False, "vector": None}
            settings, state = load_settings(env, txn, index_id), load_state(env, txn, index_id)
            embedder_settings(settings, embedder, "invalid_similar_embedder")
            packed = txn.get(external_key(index_id, external_id), db=env.external_ids)
            doc_id = None if packed is None else decode_u32(packed)
            if doc_id is not None and doc_id in state.live and tenant_filter is not None:
                scope = FilterScope(env, txn, index_id, None, settings, state, (self.cache, generation))
                matching = filter_documents(
                    scope, tenant_filter, code="invalid_similar_filter", features=features
                )
                doc_id = None if matching is not None and doc_id not in matching else doc_id
            if doc_id is None or doc_id not in state.live:
                raise ApiError("not_found_similar_id", f"Document `{external_id}` not found.")
            embeddings = document_vectors(env, txn, index_id, embedder, doc_id)
        vector = None if embeddings is None else [float(value) for value in embeddings[0]]
        return {"indexFound": True, "vector": vector}

    def database_size(self) -> int:
        with self._gate.using() as env:
            return compaction.data_size(env.path)
