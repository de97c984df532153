"""Indexing one index's documents: analyse searchable fields into token records and postings keys.

Called for every document entering or leaving the store (``documents._insert`` / ``_remove``) within
the batch's transaction, so postings always describe exactly the stored documents.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import orjson

from common.settings.capabilities import RESERVED_FIELDS
from shard.analysis import FALLBACK_LANGUAGE, AnalysisConfig, Analyzer
from shard.analysis.locales import iso639_3
from shard.index.impacts import field_keys
from shard.index.postings import START, WHOLE, Deltas, term_keys
from shard.index.prefixes import level_terms, own_prefixes, short_prefixes
from shard.index.record_store import RecordWriter
from shard.index.records import FieldTokens, decode_record, encode_record
from shard.index.settings import Settings, searchable_attributes
from shard.index.state import IndexState

# Consecutive values of an array are as far apart as two sentences, so they never look adjacent.
ARRAY_GAP = 8
# Positions are kept below 2^16, like the reference engine: words past that are not indexed.
MAX_POSITION = 0xFFFF
# Enough text to tell a document's language; detecting on more only costs time.
_LANGUAGE_SAMPLE_CHARS = 300
# whatlang costs ~100 µs a call on Latin text whatever its length, and on an ASCII sample of fewer
# letters than this it almost never answers (42 of the 21,270 such samples in cities, 0.15% of its
# documents): those are stemmed in the fallback language without asking, as queries under 20 characters are.
_MIN_ASCII_LETTERS = 20


@lru_cache(maxsize=32)
def analyzer_for(config: AnalysisConfig) -> Analyzer:
    """Analyzers keep word caches that pay off across batches, so one is kept per configuration."""
    return Analyzer(config)


class Indexer:
    def __init__(self, index_id: int, settings: Settings, deltas: Deltas, records: RecordWriter) -> None:
        self.index_id = index_id
        self.deltas = deltas
        self.records = records
        self.analyzer = analyzer_for(AnalysisConfig.from_settings(settings))
        self.searchable = searchable_attributes(settings)
        self._selected: dict[str, bool] = {}
        self._path_locales: dict[str, tuple[str, ...]] = {}

    def index(self, state: IndexState, doc_id: int, document: dict[str, Any]) -> None:
        fields = self._analyse(state, document)
        if fields:
            self.records.put(self.index_id, doc_id, encode_record(fields))
            self._post(fields, doc_id, add=True)
            state.count_tokens(((entry.field_id, len(entry.words)) for entry in fields), 1)

    def unindex(self, state: IndexState, doc_id: int) -> None:
        stored = self.records.pop(self.index_id, doc_id)
        if stored is not None:
            fields = decode_record(stored)
            self._post(fields, doc_id, add=False)
            state.count_tokens(((entry.field_id, len(entry.words)) for entry in fields), -1)

    def _analyse(self, state: IndexState, document: dict[str, Any]) -> list[FieldTokens]:
        analyzer = self.analyzer
        # path -> (words, positions, next free position); a path's values follow each other.
        analysed: dict[str, tuple[list[str], list[int], int]] = {}
        sample: list[str] = []
        sample_chars = 0
        for path, text in self._values(document):
            words, positions, start = analysed.get(path) or ([], [], 0)
            if start > MAX_POSITION:
                continue
            locales = self._locales(path)
            if not locales and sample_chars < _LANGUAGE_SAMPLE_CHARS:
                sample.append(text)
                sample_chars += len(text)
            new_words, new_positions, length = analyzer.index_text(text, locales)
            for word, position in zip(new_words, new_positions, strict=True):
                if position + start > MAX_POSITION:
                    break
                words.append(word)
                positions.append(position + start)
            analysed[path] = (words, positions, start + length + ARRAY_GAP - 1)
        detected = self._detect(" ".join(sample)[:_LANGUAGE_SAMPLE_CHARS]) if sample else None
        return [
            FieldTokens(state.field_id(path), self._language(path, detected), words, positions)
            for path, (words, positions, _) in analysed.items()
            if words
        ]

    def _locales(self, path: str) -> tuple[str, ...]:
        locales = self._path_locales.get(path)
        if locales is None:
            locales = self._path_locales[path] = self.analyzer.locales_for(path)
        return locales

    def _detect(self, sample: str) -> str:
        """The sample's language; short or ambiguous text takes ``FALLBACK_LANGUAGE``: decided by the
        document alone, never by the shard's other documents, so stems agree on any shard count.
        Stems are extra terms the ``bm25`` strategy weighs below the word itself."""
        if sample.isascii() and sum(map(str.isalpha, sample)) < _MIN_ASCII_LETTERS:
            return FALLBACK_LANGUAGE
        return self.analyzer.detect_language(sample) or FALLBACK_LANGUAGE

    def _language(self, path: str, detected: str | None) -> str | None:
        locales = self._locales(path)
        return iso639_3(locales[0]) if locales else detected

    def _post(self, fields: list[FieldTokens], doc_id: int, *, add: bool) -> None:
        deltas = self.deltas
        if add:
            deltas.adding(doc_id)
        else:
            deltas.removing(doc_id)
        for entry in fields:
            words = entry.words
            first = words[0]
            # Ordered, the first word's terms first, so their keys lead (the marks below).
            distinct = dict.fromkeys(words)
            prefixes = short_prefixes(distinct)
            stems: list[str] = []
            first_stem = None
            if entry.language is not None:
                stem, language = self.analyzer.stem, entry.language
                stemmed = {stem(word, language): None for word in distinct}
                first_stem = next(iter(stemmed))
                stems = [term for term in stemmed if term not in distinct]
            tables = (
                (deltas.words, distinct),
                (deltas.prefixes, prefixes),
                (deltas.stems, stems),
                (deltas.prefixes, level_terms(words, entry.positions)),
            )
            keys = [term_keys(self.index_id, terms, entry.field_id) for _, terms in tables]
            changes = [*zip((delta for delta, _ in tables), keys, strict=True)]
            changes.append((deltas.impacts, field_keys(self.index_id, entry.field_id, words)))
            for delta, table_keys in changes:
                if add:
                    delta.add(table_keys, doc_id)
                else:
                    delta.remove(table_keys, doc_id)
            # The word position and exactness rules' marks (postings.START, WHOLE).
            marks = (START if entry.positions[0] == 0 else 0) | (WHOLE if len(words) == 1 else 0)
            if add and marks:
                words_keys, prefix_keys, stem_keys = keys[:3]
                stem_key = stem_keys[:1] if stems and stems[0] == first_stem else []
                first_prefixes = prefix_keys[: own_prefixes(first)]
                deltas.mark(doc_id, marks, words_keys[0], first_prefixes, stem_key)

    def _values(self, document: dict[str, Any]) -> Iterator[tuple[str, str]]:
        """(dotted path, text) of every searchable string or number leaf, in document order; never the
        reserved fields' (``_geo``, ``_geojson``, ``_vectors``), as in the reference engine."""
        for name, value in document.items():
            if name not in RESERVED_FIELDS:
                yield from self._leaves(name, value)

    def _leaves(self, path: str, value: Any) -> Iterator[tuple[str, str]]:
        if isinstance(value, str):
            if self._is_searchable(path):
                yield path, value
        elif isinstance(value, bool) or value is None:
            return
        elif isinstance(value, int):
            if self._is_searchable(path):
                yield path, str(value)
        elif isinstance(value, float):
            if self._is_searchable(path):
                yield path, orjson.dumps(value).decode()
        elif isinstance(value, list):
            for item in value:
                yield from self._leaves(path, item)
        elif isinstance(value, dict):
            for name, item in value.items():
                yield from self._leaves(f"{path}.{name}", item)

    def _is_searchable(self, path: str) -> bool:
        """A listed name covers its nested fields (``doggo`` covers ``doggo.name``)."""
        selected = self._selected.get(path)
        if selected is None:
            selected = self._selected[path] = self.searchable is None or any(
                path == name or path.startswith(name + ".") for name in self.searchable
            )
        return selected
