"""What one search reads: the snapshot, the index's settings, and the fields it may match in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from common.errors import ApiError
from common.settings.patterns import pattern_matches
from shard.analysis import AnalysisConfig, Analyzer
from shard.analysis.attributes import paths_related
from shard.index.blocks import BLOCK_SIZE, block_key, unpack_block
from shard.index.codec import DocumentCodec
from shard.index.env import StoreEnv, Txn
from shard.index.indexer import analyzer_for
from shard.index.records import FieldTokens, decode_record
from shard.index.settings import Settings, searchable_attributes
from shard.index.state import IndexState
from shard.query.record_cache import RecordCache

_MAX_CACHED_BLOCKS = 256


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
    cache: RecordCache | None = None
    generation: int = 0
    """The cache generation when the snapshot began (see ``RecordCache.put``)."""
    _blocks: dict[int, list[bytes | None]] = field(default_factory=dict, repr=False)
    _records: dict[int, list[FieldTokens]] = field(default_factory=dict, repr=False)
    _weights: dict[int, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.analyzer = analyzer_for(AnalysisConfig.from_settings(self.settings))
        self.searchable = searchable_attributes(self.settings)
        typo = self.settings.get("typoTolerance") or {}
        disabled = typo.get("disableOnAttributes") or ()
        self.exact_fields = self.fields_under(disabled)

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

    def record(self, doc_id: int) -> list[FieldTokens]:
        """The document's token record; blocks stay decoded for neighbours read next."""
        record = self._records.get(doc_id)
        if record is not None:
            return record
        if self.cache is not None:
            record = self.cache.get(self.index_id, doc_id)
            if record is not None:
                self._records[doc_id] = record
                return record
        block_id = doc_id // BLOCK_SIZE
        slots = self._blocks.get(block_id)
        if slots is None:
            if len(self._blocks) >= _MAX_CACHED_BLOCKS:
                self._blocks.clear()
            stored = self.txn.get(block_key(self.index_id, doc_id), db=self.env.records)
            slots = self._blocks[block_id] = [] if stored is None else unpack_block(self.codec, stored)
        value = slots[doc_id % BLOCK_SIZE] if slots else None
        record = [] if value is None else decode_record(value)
        self._records[doc_id] = record
        if self.cache is not None and record:
            self.cache.put(self.generation, self.index_id, doc_id, record)
        return record
