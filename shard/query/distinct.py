"""Distinct (search.md §1.8, §6.5): one document per value of the distinct attribute on this shard.

As in the reference, keeping a document excludes every other candidate sharing any of its values
(an array value excludes on each element); documents without a value are never excluded. Each kept
hit carries its values so that the gateway can deduplicate across shards, where documents sharing a
value may sit on different shards (``gateway/search/distinct.py``). The hit count is then the
candidates minus those sharing a value with the page's kept hits (the hits themselves stay): the
gateway learns those values only after merging, so it asks every shard for that count in a second
round (``distinctValues``).

A hit kept here may be dropped by the gateway for a value it shares with a better hit of another
shard; the documents it excluded through its other values (array values) were then excluded
wrongly, so the gateway asks again with that hit skipped (``distinctSkip``).
"""

from __future__ import annotations

from typing import Any

from pyroaring import BitMap

from common.errors import ApiError
from common.filter.permissions import filterable_patterns, matching_rule
from shard.facet.reader import FacetReader
from shard.facet.rules import FacetedFields
from shard.facet.values import document_facets
from shard.index.sequence import read_sequences
from shard.query.context import SearchContext

DistinctValue = list[Any]
"""``[0, number]`` or ``[1, normalised string]``: a number and a string never collide."""


def distinct_attribute(ctx: SearchContext, params: dict[str, Any]) -> str | None:
    """The query's ``distinct`` (which must be filterable), else the index's ``distinctAttribute``."""
    name = params.get("distinct")
    if name is None:
        setting: str | None = ctx.settings.get("distinctAttribute")
        return setting
    rules = ctx.settings.get("filterableAttributes") or []
    match = matching_rule(rules, name)
    if match is None or not match[1].filterable:
        patterns = filterable_patterns(rules)
        available = (
            f"Available filterable attributes patterns are: `{', '.join(patterns)}`."
            if patterns
            else "This index does not have configured filterable attributes."
        )
        raise ApiError(
            "invalid_search_distinct",
            f"Index `{ctx.index_uid}`: Attribute `{name}` is not filterable and thus, cannot be used as"
            f" distinct attribute. {available}",
        )
    return name


class Distinct:
    def __init__(self, ctx: SearchContext, field: str, skipped: list[int] | None = None) -> None:
        """``skipped``: sequences of documents the gateway found sharing a value with a better hit of
        another shard; they are neither kept nor exclude anything here."""
        self.ctx = ctx
        self.field = field
        self.skipped = frozenset(skipped or ())
        self.reader = FacetReader(ctx.txn, ctx.env.facets, ctx.index_id, ctx.state)
        self.prefix = self.reader.field(field)
        self.fields = FacetedFields({"sortableAttributes": [field]})
        self.excluded = BitMap()
        """Candidates sharing a value with a kept document (never a kept one)."""
        self.values: dict[int, list[DistinctValue]] = {}
        """Each kept document's values."""

    def keep(self, doc_id: int) -> bool:
        if doc_id in self.excluded:
            return False
        if (
            self.skipped
            and read_sequences(self.ctx.env, self.ctx.txn, self.ctx.index_id, [doc_id])[0] in self.skipped
        ):
            return False
        values = self._values(doc_id)
        self.excluded |= self.docs_of(values)
        self.excluded.discard(doc_id)
        self.values[doc_id] = values
        return True

    def docs_of(self, values: list[DistinctValue]) -> BitMap:
        """The documents having one of ``values``."""
        reader, prefix = self.reader, self.prefix
        if prefix is None:
            return BitMap()
        found = [reader.number(prefix, v) if kind == 0 else reader.string(prefix, v) for kind, v in values]
        return BitMap.union(BitMap(), *found)

    def _values(self, doc_id: int) -> list[DistinctValue]:
        document = self.ctx.document(doc_id)
        facets = None if document is None else document_facets(document, self.fields).get(self.field)
        if facets is None:
            return []
        numbers = [[0, number] for number in sorted(facets.numbers)]
        return numbers + [[1, text] for text in sorted(facets.strings)]
