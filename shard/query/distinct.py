"""Distinct (search.md §1.8, §6.5): one document per value of the distinct attribute.

As in the reference, keeping a document excludes every other candidate sharing any of its values
(an array value excludes on each element); documents without a value are never excluded. Documents
sharing a value may sit on different shards, so the rule itself runs in the gateway's walk over the
merged hits (``gateway/search/distinct.py``); each hit carries its values for it.

A shard leaves out only what it can prove excluded: a document holding every value of a better
candidate. If the gateway keeps that candidate, they share a value; if it drops it, a better kept
hit shares one of the candidate's values, which the document holds too. The full rule would be
wrong here: a better hit kept by this shard may be dropped by the gateway for a value shared with
another shard's hit, and the documents it excluded through its other values would be missing.
For single values both rules are the same.

The hit count is the candidates minus those sharing a value with the page's kept hits (the hits
themselves stay): the gateway learns those values only after merging, so it asks every shard for
that count in a second round (``distinctValues``).
"""

from __future__ import annotations

from typing import Any

from pyroaring import BitMap

from common.errors import ApiError
from common.filter.permissions import filterable_patterns, matching_rule
from shard.facet.reader import FacetReader
from shard.index.facet_rules import FacetedFields
from shard.index.facet_values import document_facets
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
    def __init__(self, ctx: SearchContext, field: str) -> None:
        self.ctx = ctx
        self.field = field
        self.reader = FacetReader(ctx.txn, ctx.env.facets, ctx.index_id, ctx.state)
        self.prefix = self.reader.field(field)
        self.fields = FacetedFields({"sortableAttributes": [field]})
        self.excluded = BitMap()
        """Candidates holding every value of a better candidate (never a kept one)."""
        self.kept = BitMap()
        self.values: dict[int, list[DistinctValue]] = {}
        """Each kept document's values."""

    def keep(self, doc_id: int) -> bool:
        if doc_id in self.excluded:
            return False
        values = self._values(doc_id)
        self.values[doc_id] = values
        self.kept.add(doc_id)
        if values:
            # A better kept document may hold all of these values and more: it stays kept.
            self.excluded |= BitMap.intersection(*self._docs_of_each(values)) - self.kept
        return True

    def docs_of(self, values: list[DistinctValue]) -> BitMap:
        """The documents having one of ``values``."""
        return BitMap.union(BitMap(), *self._docs_of_each(values))

    def _docs_of_each(self, values: list[DistinctValue]) -> list[BitMap]:
        reader, prefix = self.reader, self.prefix
        if prefix is None:
            return [BitMap() for _ in values]
        return [reader.number(prefix, v) if kind == 0 else reader.string(prefix, v) for kind, v in values]

    def _values(self, doc_id: int) -> list[DistinctValue]:
        document = self.ctx.document(doc_id)
        facets = None if document is None else document_facets(document, self.fields).get(self.field)
        if facets is None:
            return []
        numbers = [[0, number] for number in sorted(facets.numbers)]
        return numbers + [[1, text] for text in sorted(facets.strings)]
