"""The ranking rules as bucket producers (search.md §7.4).

A rule splits a set of documents into ordered buckets, each with the rank the rule gives it. Words
and typo work on whole bitmaps; the positional rules score documents one by one from their records,
within the per-query evaluation budget (past it, the rest of the bucket is left unranked, as the
search cutoff does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pyroaring import BitMap

from shard.index.prefixes import LEVELS
from shard.query.ranking.coverage import Kept
from shard.query.ranking.positional import EXACT_MATCH, MATCHES_START, DocumentCosts
from shard.query.ranking.score import SKIPPED, Rank, fold

if TYPE_CHECKING:
    from shard.query.ranking.bucket_sort import Ranker


@dataclass(frozen=True)
class Bucket:
    docs: BitMap
    rank: Rank
    kept: Kept
    typos: int | None = None
    """The typo rule's cost of this bucket, once it has ranked: later rules look only at the
    matches that fit it, as the reference does (a ``story`` typo does not place ``stork``)."""


class Rule(Protocol):
    name: str

    def buckets(self, ranker: Ranker, docs: BitMap, kept: Kept, typos: int | None) -> Iterator[Bucket]: ...

    def floor(self, ranker: Ranker, kept: Kept) -> Rank:
        """The rank of the worst bucket this rule can give within ``kept`` (see ``Ranker.floor_ranks``)."""
        ...


class WordsRule:
    """More kept query words first; the matching strategy decides which terms go first.

    Words are counted, not terms: a phrase counts its indexed words (not its stop words), as the
    reference's ``matchingWords`` does.
    """

    name = "words"

    def buckets(self, ranker: Ranker, docs: BitMap, kept: Kept, typos: int | None) -> Iterator[Bucket]:
        terms = ranker.query.terms
        total = sum(term.word_count for term in terms)
        seen = BitMap()
        for subset in ranker.kept_sets:
            if not set(subset) <= set(kept):
                continue
            found = (ranker.coverage.matching(subset) & docs) - seen
            seen |= found
            if found:
                matching = sum(terms[index].word_count for index in subset)
                details = {"matchingWords": matching, "maxMatchingWords": total}
                yield Bucket(found, Rank(self.name, ((matching, total),), details), subset, typos)

    def floor(self, ranker: Ranker, kept: Kept) -> Rank:
        terms = ranker.query.terms
        matching = sum(terms[index].word_count for index in kept)
        return Rank(self.name, ((matching, sum(term.word_count for term in terms)),))


class TypoRule:
    name = "typo"

    def buckets(self, ranker: Ranker, docs: BitMap, kept: Kept, typos: int | None) -> Iterator[Bucket]:
        top = ranker.coverage.max_cost(kept)
        levels = ranker.coverage.levels(kept, docs)
        previous = BitMap()
        for cost, level in enumerate(levels):
            found = level - previous
            previous = level
            if found:
                details = {"typoCount": cost, "maxTypoCount": top}
                yield Bucket(found, Rank(self.name, ((top + 1 - cost, top + 1),), details), kept, cost)

    def floor(self, ranker: Ranker, kept: Kept) -> Rank:
        return Rank(self.name, ((1, ranker.coverage.max_cost(kept) + 1),))


class CostRule:
    """A rule scoring each document with a cost from its record; lower cost first."""

    def __init__(
        self,
        name: str,
        cost: Callable[[DocumentCosts, int, Kept, int | None], int],
        maximum: Callable[[DocumentCosts, Kept], int],
    ) -> None:
        """Only the matches that fit the typo bucket are scored, as on the reference: a 2-gram with a
        typo does not make two words of a typo-free bucket adjacent."""
        self.name = name
        self._cost = cost
        self._maximum = maximum

    def buckets(self, ranker: Ranker, docs: BitMap, kept: Kept, typos: int | None) -> Iterator[Bucket]:
        costs = ranker.costs
        top = self._maximum(costs, kept)
        if top == 0:
            yield Bucket(docs, Rank(self.name, ((1, 1),)), kept, typos)
            return
        groups = ranker.group(docs, lambda doc_id: self._cost(costs, doc_id, kept, typos))
        if groups is None:
            yield Bucket(docs, SKIPPED, kept, typos)
            return
        for cost in sorted(groups):
            yield Bucket(BitMap(groups[cost]), Rank(self.name, ((top + 1 - cost, top + 1),)), kept, typos)

    def floor(self, ranker: Ranker, kept: Kept) -> Rank:
        return Rank(self.name, ((1, self._maximum(ranker.costs, kept) + 1),))


class AttributeRankRule(CostRule):
    """With one kept term, each weight's documents come from its fields' postings (``marks.py``),
    whatever their number."""

    def __init__(self) -> None:
        super().__init__("attributeRank", DocumentCosts.attribute, DocumentCosts.attribute_max)

    def buckets(self, ranker: Ranker, docs: BitMap, kept: Kept, typos: int | None) -> Iterator[Bucket]:
        top = ranker.costs.attribute_max(kept)
        remaining = docs
        if top > 0:
            for weight, fields in ranker.marks.weight_levels():
                found = ranker.marks.in_fields(kept, typos, fields)
                if found is None:
                    break
                part = remaining & found
                if part:
                    yield Bucket(part, Rank(self.name, ((top + 1 - weight, top + 1),)), kept, typos)
                    remaining = remaining - part
                if not remaining:
                    return
        yield from super().buckets(ranker, remaining, kept, typos)


class WordPositionRule(CostRule):
    """With one kept term, the documents where it stands first in a field (cost 0) come from the
    postings' marks (``marks.py``), whatever their number, and so do the others when a short prefix
    alone places the term (its position levels); only the rest needs records."""

    def __init__(self) -> None:
        super().__init__("wordPosition", DocumentCosts.word_position, DocumentCosts.word_position_max)

    def buckets(self, ranker: Ranker, docs: BitMap, kept: Kept, typos: int | None) -> Iterator[Bucket]:
        starting = ranker.marks.starting(kept, typos)
        if starting is None:
            yield from super().buckets(ranker, docs, kept, typos)
            return
        top = ranker.costs.word_position_max(kept)
        first = docs & starting
        if first:
            yield Bucket(first, Rank(self.name, ((top + 1, top + 1),)), kept, typos)
        rest = docs - first
        prefix = ranker.marks.leveled(kept, typos)
        if prefix is not None:
            # A short prefix's documents by the level of its earliest position: no record read.
            for level in LEVELS:
                if not rest:
                    return
                part = rest & ranker.marks.at_level(prefix, level)
                if part:
                    yield Bucket(part, Rank(self.name, ((top + 1 - level, top + 1),)), kept, typos)
                    rest = rest - part
        if rest:
            yield from super().buckets(ranker, rest, kept, typos)


class AttributeRule:
    """The legacy ``attribute`` rule: attribute rank, then word position, as one rule."""

    name = "attribute"

    def buckets(self, ranker: Ranker, docs: BitMap, kept: Kept, typos: int | None) -> Iterator[Bucket]:
        costs = ranker.costs
        attribute_top, position_top = costs.attribute_max(kept), costs.word_position_max(kept)
        groups = ranker.group(
            docs,
            lambda doc_id: (costs.attribute(doc_id, kept, typos), costs.word_position(doc_id, kept, typos)),
        )
        if groups is None:
            yield Bucket(docs, SKIPPED, kept, typos)
            return
        for attribute, position in sorted(groups):
            first = (attribute_top + 1 - attribute, attribute_top + 1)
            second = (position_top + 1 - position, position_top + 1)
            details = {
                "attributeRankingOrderScore": fold([first]),
                "queryWordDistanceScore": fold([second]),
            }
            rank = Rank(self.name, (first, second), details)
            yield Bucket(BitMap(groups[(attribute, position)]), rank, kept, typos)

    def floor(self, ranker: Ranker, kept: Kept) -> Rank:
        costs = ranker.costs
        return Rank(self.name, ((1, costs.attribute_max(kept) + 1), (1, costs.word_position_max(kept) + 1)))


class ExactnessRule:
    name = "exactness"

    def buckets(self, ranker: Ranker, docs: BitMap, kept: Kept, typos: int | None) -> Iterator[Bucket]:
        marked = ranker.marks.exactness(kept)
        if marked is not None:
            # One kept term: its own word alone in a field, first in one, elsewhere, or absent.
            whole, starting, anywhere = marked
            exact = docs & whole
            starts = (docs & starting) - exact
            elsewhere = (docs & anywhere) - exact - starts
            absent = docs - exact - starts - elsewhere
            parts = (
                (exact, (EXACT_MATCH, 0)),
                (starts, (MATCHES_START, 0)),
                (elsewhere, (2, 0)),
                (absent, (2, 1)),
            )
            for part, order in parts:
                if part:
                    yield Bucket(part, self._rank(order, len(kept)), kept, typos)
            return
        groups = ranker.group(docs, lambda doc_id: _exactness_order(ranker, doc_id, kept, typos))
        if groups is None:
            yield Bucket(docs, SKIPPED, kept, typos)
            return
        for order in sorted(groups):
            yield Bucket(BitMap(groups[order]), self._rank(order, len(kept)), kept, typos)

    def _rank(self, order: tuple[int, int], most: int) -> Rank:
        kind, missing = order
        if kind == EXACT_MATCH:
            return Rank(self.name, ((3, 3),), {"matchType": "exactMatch"})
        if kind == MATCHES_START:
            return Rank(self.name, ((2, 3),), {"matchType": "matchesStart"})
        exact = most - missing
        details = {"matchType": "noExactMatch", "matchingWords": exact, "maxMatchingWords": most}
        return Rank(self.name, ((1, 3), (exact + 1, most + 1)), details)

    def floor(self, ranker: Ranker, kept: Kept) -> Rank:
        return Rank(self.name, ((1, 3), (1, len(kept) + 1)))


def _exactness_order(ranker: Ranker, doc_id: int, kept: Kept, typos: int | None) -> tuple[int, int]:
    kind, exact = ranker.costs.exactness(doc_id, kept, typos)
    return kind, (len(kept) - exact if kind > MATCHES_START else 0)


RELEVANCY_RULES: dict[str, Callable[[], Rule]] = {
    "words": WordsRule,
    "typo": TypoRule,
    "proximity": lambda: CostRule("proximity", DocumentCosts.proximity, DocumentCosts.proximity_max),
    "attributeRank": AttributeRankRule,
    "wordPosition": WordPositionRule,
    "attribute": AttributeRule,
    "exactness": ExactnessRule,
}

DEFAULT_RULES = ["words", "typo", "proximity", "attributeRank", "sort", "wordPosition", "exactness"]


def configured_rules(
    ranking_rules: Sequence[str] | None,
    strategy: str,
    sorts: Sequence[Sequence[Rule]] = (),
    *,
    placeholder: bool = False,
) -> list[Rule]:
    """The rules to apply, in order: duplicates ignored, ``words`` inserted before the first relevancy
    rule (unless every term must match), and in place of each ranking rule the sort rules it stands for
    (``sorts``, aligned with ``ranking_rules``, from ``sort.py``). A placeholder search only sorts."""
    entries: list[str | Rule] = []
    seen: set[str] = set()
    first: int | None = None
    for index, name in enumerate(ranking_rules or DEFAULT_RULES):
        if name in RELEVANCY_RULES:
            if placeholder or name in seen:
                continue
            seen.add(name)
            first = len(entries) if first is None else first
            if name != "words":
                entries.append(name)
        elif index < len(sorts):
            entries.extend(sorts[index])
    # Every other relevancy rule ranks within a words bucket, so words comes before them all.
    if first is not None and strategy != "all":
        entries.insert(first, "words")
    return [RELEVANCY_RULES[entry]() if isinstance(entry, str) else entry for entry in entries]
