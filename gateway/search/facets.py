"""Summing the shards' facet counts into ``facetDistribution``/``facetStats`` and facet-search hits.

Shards send what makes the sums exact (shard/facet/distribution.py): in ``alpha`` order their first
``maxValuesPerFacet`` values, in ``count`` order all of them. A string value shows the spelling of its
first candidate document in insertion order: the one with the lowest sequence among the shards'.
Order (search.md §1.7): the number block, then strings, ``maxValuesPerFacet`` values in all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from common.facets import COUNT, DEFAULT_MAX_VALUES, check_facets, number_key

LINEAR_SCAN_CANDIDATES = 3000
"""With at most this many candidates the reference orders numbers by their decimal strings."""


@dataclass
class FieldCounts:
    """One field's counts summed over shards (or over indexes, for merged federated facets)."""

    order: str
    numbers: dict[float, int] = field(default_factory=dict)
    strings: dict[str, list[Any]] = field(default_factory=dict)
    """normalised -> [count, sequence of the first document, its spelling]"""
    low: float | None = None
    high: float | None = None

    def add_numbers(self, values: Iterable[Sequence[Any]]) -> None:
        for value, count in values:
            self.numbers[value] = self.numbers.get(value, 0) + count

    def add_strings(self, values: Iterable[Sequence[Any]]) -> None:
        for normalised, count, sequence, spelling in values:
            known = self.strings.get(normalised)
            if known is None:
                self.strings[normalised] = [count, sequence, spelling]
            else:
                known[0] += count
                if sequence < known[1]:
                    known[1:] = [sequence, spelling]

    def add_stats(self, low: float, high: float) -> None:
        self.low = low if self.low is None else min(self.low, low)
        self.high = high if self.high is None else max(self.high, high)

    def merge(self, other: FieldCounts) -> None:
        self.add_numbers(other.numbers.items())
        self.add_strings([normalised, *entry] for normalised, entry in other.strings.items())
        if other.low is not None and other.high is not None:
            self.add_stats(other.low, other.high)

    def top(self, limit: int | None, candidates: int) -> FieldCounts:
        """The values a distribution shows, in its order: numbers then strings, ``limit`` in all."""
        if self.order == COUNT:
            numbers = sorted(self.numbers.items(), key=lambda item: (-item[1], item[0]))
            strings = sorted(self.strings.items(), key=lambda item: (-item[1][0], item[0]))
        else:
            numbers = sorted(self.numbers.items())
            if candidates <= LINEAR_SCAN_CANDIDATES:
                numbers.sort(key=lambda item: number_key(item[0]))
            strings = sorted(self.strings.items())
        if limit is not None:
            numbers = numbers[:limit]
            strings = strings[: max(limit - len(numbers), 0)]
        return FieldCounts(self.order, dict(numbers), dict(strings), self.low, self.high)

    def distribution(self, limit: int | None, candidates: int) -> dict[str, int]:
        shown = self.top(limit, candidates)
        counts = {number_key(value): count for value, count in shown.numbers.items()}
        for count, _, spelling in shown.strings.values():
            counts[spelling] = count
        return counts

    def stats(self) -> dict[str, float] | None:
        if self.low is None or self.high is None:
            return None
        return {"min": self.low, "max": self.high}


@dataclass
class Facets:
    """An index's facet counts: what a search's ``facets`` asked for."""

    fields: dict[str, FieldCounts] = field(default_factory=dict)
    max_values: int = DEFAULT_MAX_VALUES
    candidates: int = 0

    def distribution(self) -> dict[str, dict[str, int]]:
        return {
            name: counts.distribution(self.max_values, self.candidates)
            for name, counts in sorted(self.fields.items())
        }

    def stats(self) -> dict[str, dict[str, float]]:
        found = {name: counts.stats() for name, counts in sorted(self.fields.items())}
        return {name: stats for name, stats in found.items() if stats is not None}


def merge_facets(replies: Sequence[dict[str, Any]], candidates: int, patterns: Sequence[str]) -> Facets:
    """The shards' facet replies summed. No reply means no shard holds the index yet: its settings
    are the defaults, so any named pattern is not filterable."""
    if not replies:
        check_facets(patterns, [])
    facets = Facets(candidates=candidates)
    for reply in replies:
        facets.max_values = reply["maxValuesPerFacet"]
        for name, found in reply["fields"].items():
            counts = facets.fields.setdefault(name, FieldCounts(found["order"]))
            counts.add_numbers(found["numbers"])
            counts.add_strings(found["strings"])
            if found["stats"] is not None:
                counts.add_stats(*found["stats"])
    return facets


def facet_hits(replies: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Facet-search hits summed over shards, ordered and cut as the facet's settings say."""
    if not replies:
        return []
    counts = FieldCounts(replies[0]["order"])
    for reply in replies:
        counts.add_strings(reply["hits"])
    shown = counts.distribution(replies[0]["maxValuesPerFacet"], 0)
    return [{"value": value, "count": count} for value, count in shown.items()]
