"""What one search reads: the snapshot, the index's settings, and the fields it may match in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson
from pyroaring import BitMap

from common.errors import ApiError
from common.settings.patterns import pattern_matches
from shard.analysis import AnalysisConfig, Analyzer
from shard.analysis.attributes import paths_related
from shard.index.blocks import BLOCK_SIZE, block_key, unpack_block
from shard.index.codec import DocumentCodec
from shard.index.documents import Document
from shard.index.env import StoreEnv, Txn
from shard.index.indexer import analyzer_for
from shard.index.postings import term_docs
from shard.index.read_cache import DOCUMENT_BLOCKS, RECORDS, CacheRef, Key, T, cached_value
from shard.index.record_store import dictionary_id, read_record
from shard.index.settings import Settings, searchable_attributes
from shard.index.state import IndexState
from shard.query.record_view import EMPTY_VIEW, RecordView, view_record
from shard.query.typos import TypoCaps


@dataclass
class SearchContext:
    env: StoreEnv
    codec: DocumentCodec
    txn: Txn
    index_id: int
    index_uid: str
    settings: Settings
    state: IndexState
    analyzer: Analyzer = field(init=False)
    searchable: tuple[str, ...] | None = field(init=False)
    """The searchable attribute list in weight order; None under ``["*"]``."""
    allowed_fields: set[int] | None = None
    """Field ids the query may match in (``attributesToSearchOn``); None for every field."""
    exact_fields: set[int] = field(default_factory=set)
    """Fields of ``typoTolerance.disableOnAttributes``: matched without typos only."""
    cache_ref: CacheRef | None = None
    """The shard's read cache and its generation when the snapshot began (see ``ReadCache``)."""
    shards: int = 1
    """How many shards share the index: each takes its share of a query's index-wide budgets."""
    typo_caps: TypoCaps = field(default_factory=TypoCaps)
    """The search's typo lookups as capped over the whole index (shared by a search's contexts)."""
    timed_out: bool = False
    """The search cutoff (``searchCutoffMs``, 1.5 s by default) left a bucket unranked: a degraded
    search, as the reference counts them (``meilisearch_degraded_search_requests``)."""
    _records: dict[int, RecordView] = field(default_factory=dict, repr=False)
    _weights: dict[int, int] = field(default_factory=dict, repr=False)
    _word_docs: dict[tuple[str, frozenset[int] | None], BitMap] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.analyzer = analyzer_for(AnalysisConfig.from_settings(self.settings))
        self.searchable = searchable_attributes(self.settings)
        typo = self.settings.get("typoTolerance") or {}
        disabled = typo.get("disableOnAttributes") or ()
        self.exact_fields = self.fields_under(disabled)

    def share(self, budget: int) -> int:
        """This shard's part of an index-wide per-query budget (documents scored or checked from their
        records): whether a budget cuts a query then depends on the index, not on how many shards hold
        it (up to how evenly the documents in question spread over them)."""
        return max(1, budget // self.shards)

    def fields_under(self, names: Any) -> set[int]:
        """Ids of the indexed fields one of ``names`` covers: equal, nested under it, or matching it as
        a pattern (``ti*``)."""
        return {
            field_id
            for field_id, path in enumerate(self.state.field_names)
            if any(pattern_matches(name, path) for name in names)
        }

    def restrict_to(self, attributes: list[str] | None) -> None:
        """Apply ``attributesToSearchOn``: a name must be searchable, unless every field is."""
        if attributes is None or "*" in attributes:
            return
        if self.searchable is not None:
            for name in attributes:
                if "*" in name:
                    continue
                if not any(paths_related(entry, name) for entry in self.searchable):
                    raise ApiError(
                        "invalid_search_attributes_to_search_on",
                        f"Index `{self.index_uid}`: Attribute `{name}` is not searchable. "
                        f"Available searchable attributes are: `{', '.join(self.searchable)}`.",
                    )
        # Indexed fields are searchable ones, so patterns can select among them directly.
        self.allowed_fields = self.fields_under(attributes)

    def weight(self, field_id: int) -> int:
        """The field's rank in ``searchableAttributes`` (0 = most important; all 0 under ``*``)."""
        weight = self._weights.get(field_id)
        if weight is None:
            weight = 0
            if self.searchable is not None and field_id < len(self.state.field_names):
                path = self.state.field_names[field_id]
                for rank, name in enumerate(self.searchable):
                    if pattern_matches(name, path):
                        weight = rank
                        break
            self._weights[field_id] = weight
        return weight

    @property
    def max_weight(self) -> int:
        return 0 if self.searchable is None else len(self.searchable) - 1

    def word_docs(self, word: str, fields: set[int] | None) -> BitMap:
        """Documents having ``word`` in one of ``fields`` (every field when None); matching and the
        per-document rules ask for the same words, so each is read once per search. A copy: callers
        update their sets in place."""
        key = (word, None if fields is None else frozenset(fields))
        docs = self._word_docs.get(key)
        if docs is None:
            docs = self._word_docs[key] = term_docs(self.txn, self.env.words, self.index_id, word, fields)
        return BitMap(docs)

    @cached_property
    def _record_dictionary(self) -> bytes | None:
        return dictionary_id(self.env, self.txn, self.index_id)

    def record(self, doc_id: int) -> RecordView:
        """The document's token record, decoded once per snapshot and kept in the read cache."""
        record = self._records.get(doc_id)
        if record is None:
            record = self._records[doc_id] = self.cached(
                (RECORDS, self.index_id, doc_id), lambda: self._view(doc_id), lambda view: view.weight
            )
        return record

    def _view(self, doc_id: int) -> RecordView:
        value = read_record(self.env, self.txn, self.codec, self.index_id, doc_id, self._record_dictionary)
        return EMPTY_VIEW if value is None else view_record(value)

    def cached(self, key: Key, build: Callable[[], T], weight: Callable[[T], int]) -> T:
        """``build()``, kept in the read cache until the next batch (see ``read_cache.cached_value``)."""
        return cached_value(self.cache_ref, key, build, weight)

    def document(self, doc_id: int) -> Document | None:
        """A stored document; its decompressed block is shared with later searches."""
        slots = self.cached(
            (DOCUMENT_BLOCKS, self.index_id, doc_id // BLOCK_SIZE),
            lambda: self._block(doc_id),
            lambda block: sum(len(value or b"") for value in block) + 64,
        )
        value = slots[doc_id % BLOCK_SIZE] if slots else None
        return None if value is None else orjson.loads(value)

    def _block(self, doc_id: int) -> list[bytes | None]:
        """The slots of the document's block; empty when the block is not stored."""
        stored = self.txn.get(block_key(self.index_id, doc_id), db=self.env.documents)
        return [] if stored is None else unpack_block(self.codec, stored)
