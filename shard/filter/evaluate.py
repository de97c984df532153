"""Evaluating a filter tree on one index's facet values (search.md §4.3), bottom-up on bitmaps.

A field no document has matches nothing, so its complement (``!=``, ``NOT``) is every document.
Operands are normalised like stored strings; an operand written as a finite number is looked up as a
number too, and comparisons take the union of the numeric and the lexicographic string range.
"""

from __future__ import annotations

from collections.abc import Callable

from pyroaring import BitMap

from common.filter.ast import (
    And,
    Between,
    Compare,
    Contains,
    Exists,
    Filter,
    Foreign,
    GeoBoundingBox,
    GeoPolygon,
    GeoRadius,
    In,
    IsEmpty,
    IsNull,
    Not,
    Or,
    StartsWith,
    Token,
    VectorsExists,
)
from common.filter.errors import FilterError, located
from shard.facet.column import numbers_between, sort_column
from shard.facet.reader import FacetReader
from shard.geo.filters import GeoFilters
from shard.index.facet_keys import EMPTY, EXISTS, NULL
from shard.index.facet_values import facet_number, normalize_facet
from shard.index.read_cache import CacheRef


class FilterEvaluator:
    """Evaluates a tree already checked against the index's rules and experimental features
    (``common.filter.permissions``)."""

    def __init__(
        self,
        reader: FacetReader,
        universe: BitMap,
        geo: GeoFilters,
        vectors: Callable[[str], BitMap],
        cached: CacheRef | None = None,
    ) -> None:
        self.reader = reader
        self.universe = universe
        """Every live document: what ``NOT`` and ``!=`` complement against."""
        self.geo = geo
        self.vectors = vectors
        """``_vectors…EXISTS`` by the path after ``_vectors`` (``shard/vector/filters.py``)."""
        self.cached = cached
        """The shard's read cache, where sort columns are kept between searches."""

    def evaluate(self, node: Filter) -> BitMap:
        match node:
            case And(children):
                return self._all(children)
            case Or(children):
                return BitMap.union(BitMap(), *(self.evaluate(child) for child in children))
            case Not(child):
                return self.universe - self.evaluate(child)
            case Compare(field, "=", value):
                return self._equal(field, value)
            case Compare(field, "!=", value):
                return self.universe - self._equal(field, value)
            case Compare(field, op, value):
                return self._compare(field, op, value)
            case Between(field, low, high):
                return self._between(field, low, high)
            case In(field, values):
                return BitMap.union(BitMap(), *(self._equal(field, value) for value in values))
            case Exists(field):
                return self._marker(field, EXISTS)
            case IsNull(field):
                return self._marker(field, NULL)
            case IsEmpty(field):
                return self._marker(field, EMPTY)
            case Contains(field, value):
                return self._contains(field, value)
            case StartsWith(field, value):
                return self._starts_with(field, value)
            case GeoRadius():
                return self.geo.radius(self.universe, node)
            case GeoBoundingBox():
                return self.geo.box(self.universe, node)
            case GeoPolygon():
                return self.geo.polygon(self.universe, node)
            case Foreign(field=field):
                # The gateway joins them where a route can (gateway/foreign.py).
                raise FilterError(
                    located("Filter condition `_foreign` is not supported for this endpoint.", field.span)
                )
            case VectorsExists(path=path):
                return self.vectors(path) & self.universe
        raise TypeError(f"not a filter node: {node!r}")

    def _all(self, children: tuple[Filter, ...]) -> BitMap:
        """Intersection, stopping at the first empty result."""
        found: BitMap | None = None
        for child in children:
            docs = self.evaluate(child)
            found = docs if found is None else found & docs
            if not found:
                break
        return BitMap() if found is None else found

    def _equal(self, field: Token, value: Token) -> BitMap:
        prefix = self.reader.field(field.text)
        if prefix is None:
            return BitMap()
        docs = self.reader.string(prefix, normalize_facet(value.text))
        number = facet_number(value.text)
        if number is not None:
            docs |= self.reader.number(prefix, number)
        return docs

    def _compare(self, field: Token, op: str, value: Token) -> BitMap:
        prefix = self.reader.field(field.text)
        if prefix is None:
            return BitMap()
        number = facet_number(value.text)
        text = normalize_facet(value.text)
        strict = op in (">", "<")
        reader = self.reader
        if op in (">", ">="):
            docs = reader.strings(prefix, text, None, strict=strict)
            if number is not None:
                docs |= self._numbers(field, prefix, number, None, strict=strict)
        else:
            docs = reader.strings(prefix, None, text, strict=strict)
            if number is not None:
                docs |= self._numbers(field, prefix, None, number, strict=strict)
        return docs

    def _between(self, field: Token, low: Token, high: Token) -> BitMap:
        prefix = self.reader.field(field.text)
        if prefix is None:
            return BitMap()
        docs = BitMap()
        low_text, high_text = normalize_facet(low.text), normalize_facet(high.text)
        if low_text <= high_text:
            docs |= self.reader.strings(prefix, low_text, high_text)
        low_number, high_number = facet_number(low.text), facet_number(high.text)
        if low_number is not None and high_number is not None and low_number <= high_number:
            docs |= self._numbers(field, prefix, low_number, high_number, strict=False)
        return docs

    def _numbers(
        self, field: Token, prefix: bytes, low: float | None, high: float | None, *, strict: bool
    ) -> BitMap:
        """A numeric range from the field's sort column when the read cache can keep one (built once
        per generation), else (or when multi-valued documents straddle it) from its keys."""
        if self.cached is not None:
            column = sort_column(self.reader, field.text, self.cached)
            found = numbers_between(column, low, high, strict=strict)
            if found is not None:
                return found
        return self.reader.numbers(prefix, low, high, strict=strict)

    def _marker(self, field: Token, kind: bytes) -> BitMap:
        prefix = self.reader.field(field.text)
        return BitMap() if prefix is None else self.reader.docs(prefix + kind)

    def _contains(self, field: Token, value: Token) -> BitMap:
        prefix = self.reader.field(field.text)
        if prefix is None:
            return BitMap()
        return self.reader.strings_containing(prefix, normalize_facet(value.text))

    def _starts_with(self, field: Token, value: Token) -> BitMap:
        prefix = self.reader.field(field.text)
        if prefix is None:
            return BitMap()
        start = normalize_facet(value.text)
        if not start:
            return self.reader.docs(prefix + EXISTS)
        return self.reader.string_prefix(prefix, start)
