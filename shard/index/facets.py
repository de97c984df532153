"""Keeping an index's facet keys in step with its documents, within the batch's transaction.

Like postings, changes go to the batch's ``Deltas`` (the ``facets`` delta) and are merged once per
touched key at flush. A removal re-extracts the keys from the stored document it removes, so no
per-document facet record is kept.
"""

from __future__ import annotations

from typing import Any

from shard.index.env import index_prefix
from shard.index.facet_keys import (
    EMPTY,
    EXISTS,
    NULL,
    NUMBER,
    SPELLING,
    STRING,
    encode_number,
    encode_spelling,
    encode_string,
    field_prefix,
)
from shard.index.facet_rules import FieldSelection
from shard.index.facet_values import document_facets
from shard.index.postings import Deltas
from shard.index.shapes import ShapeWriter
from shard.index.state import IndexState


class FacetIndexer:
    def __init__(
        self, index_id: int, fields: FieldSelection, deltas: Deltas, shapes: ShapeWriter | None = None
    ) -> None:
        """``fields``: the settings' faceted fields, or only the newly faceted ones (a settings change)."""
        self.prefix = index_prefix(index_id)
        self.deltas = deltas
        self.fields = fields
        self.shapes = shapes
        """Where ``_geojson`` shapes go when it is filterable (written directly, not through deltas)."""

    def index(self, state: IndexState, doc_id: int, document: dict[str, Any]) -> None:
        keys = self._keys(state, document)
        if keys:
            self.deltas.adding(doc_id)
            self.deltas.facets.add(keys, doc_id)
        if self.shapes is not None:
            self.shapes.write(doc_id, document)

    def unindex(self, state: IndexState, doc_id: int, document: dict[str, Any]) -> None:
        keys = self._keys(state, document)
        if keys:
            self.deltas.removing(doc_id)
            self.deltas.facets.remove(keys, doc_id)
        if self.shapes is not None:
            self.shapes.erase(doc_id)

    def _keys(self, state: IndexState, document: dict[str, Any]) -> list[bytes]:
        if self.fields.none:
            return []
        keys: list[bytes] = []
        for path, facets in document_facets(document, self.fields).items():
            prefix = field_prefix(self.prefix, state.facet_field_id(path))
            keys.append(prefix + EXISTS)
            if facets.null:
                keys.append(prefix + NULL)
            if facets.empty:
                keys.append(prefix + EMPTY)
            keys.extend(prefix + NUMBER + encode_number(number) for number in facets.numbers)
            keys.extend(prefix + STRING + encode_string(string) for string in facets.strings)
            keys.extend(
                prefix + SPELLING + encode_spelling(string, original)
                for string, original in facets.strings.items()
            )
        return keys
