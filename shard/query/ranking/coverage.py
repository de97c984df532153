"""Which documents match a set of kept terms, and at what typo cost: bitmap algebra, no records.

A kept set is matched term by term, except that 2-3 consecutive kept terms may be matched together by
their n-gram (``sun flower`` by ``sunflower``). Dynamic programming over the kept terms in query order
with cumulative cost levels gives, for every total cost ``c``, the documents matching the set with at
most ``c`` typos: the typo rule's buckets are the differences of consecutive levels.
"""

from __future__ import annotations

from pyroaring import BitMap

from shard.query.context import SearchContext
from shard.query.derivations import Derivations
from shard.query.docsets import DocSets, resolve

Kept = tuple[int, ...]
"""Indexes of the query terms a words bucket keeps, ascending."""


class Coverage:
    def __init__(
        self, ctx: SearchContext, derivations: list[Derivations], base: Coverage | None = None
    ) -> None:
        """``base``: the coverage of the same derivations without their stems, whose sets this one
        extends with the stems' documents instead of resolving them again (``stem_tier.py``)."""
        self.ctx = ctx
        self.derivations = derivations
        self.base = base
        self._by_span: dict[tuple[int, int], int] = {
            (derivation.first, derivation.last): number for number, derivation in enumerate(derivations)
        }
        self._sets: dict[int, DocSets] = {}
        self._matches: dict[Kept, BitMap] = {}

    def sets(self, number: int) -> DocSets:
        sets = self._sets.get(number)
        if sets is None:
            base = None if self.base is None else self.base.sets(number)
            sets = self._sets[number] = resolve(self.ctx, self.derivations[number], base)
        return sets

    def term_docs(self, term: int) -> BitMap:
        """Documents matching the term on its own (n-grams aside): for frequency and emptiness."""
        return self.sets(self._by_span[(term, term)]).all()

    def segments(self, kept: Kept) -> list[list[tuple[int, int]]]:
        """For each kept term (in order), the (derivation, segment length) pairs that can end there."""
        result: list[list[tuple[int, int]]] = []
        for position, term in enumerate(kept):
            options = []
            for size in range(1, 4):
                first = position - size + 1
                if first < 0 or kept[first] != term - size + 1:
                    break
                number = self._by_span.get((term - size + 1, term))
                if number is not None:
                    options.append((number, size))
            result.append(options)
        return result

    def matching(self, kept: Kept) -> BitMap:
        """Documents matching every kept term: ``levels(kept)[-1]``, found without cost levels, since
        no derivation costs more than its ``most_cost`` (the universe of both stem tiers is this)."""
        found = self._matches.get(kept)
        if found is None:
            reach = [self.ctx.state.live]
            for position, options in enumerate(self.segments(kept)):
                row = BitMap()
                for number, size in options:
                    before = reach[position + 1 - size]
                    if before:
                        row |= before & self.sets(number).all()
                reach.append(row)
            found = self._matches[kept] = reach[-1]
        return found

    def max_cost(self, kept: Kept) -> int:
        best: list[int] = [0]
        for position, options in enumerate(self.segments(kept)):
            best.append(
                max(
                    (
                        best[position + 1 - size] + self.derivations[number].most_cost
                        for number, size in options
                    ),
                    default=0,
                )
            )
        return best[-1]

    def levels(self, kept: Kept, within: BitMap | None) -> list[BitMap]:
        """``levels[c]`` = documents (of ``within``) matching all kept terms with total cost <= c."""
        top = self.max_cost(kept)
        start = [within if within is not None else self.ctx.state.live] * (top + 1)
        table: list[list[BitMap]] = [start]
        for position, options in enumerate(self.segments(kept)):
            row = [BitMap() for _ in range(top + 1)]
            for number, size in options:
                previous = table[position + 1 - size]
                sets = self.sets(number)
                for cost, docs in sets.by_cost.items():
                    for total in range(cost, top + 1):
                        base = previous[total - cost]
                        if base:
                            row[total] |= base & docs
            # Cumulative: a document matching within c also matches within c + 1.
            for total in range(1, top + 1):
                row[total] |= row[total - 1]
            table.append(row)
        return table[-1]
