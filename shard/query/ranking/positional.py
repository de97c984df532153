"""The ranking rules that need word positions, computed per document from its token record.

Each returns a cost (0 = best) and the largest possible cost for the kept terms, so the rule's rank is
``max + 1 - cost`` out of ``max + 1`` (search.md §7.5).
"""

from __future__ import annotations

import itertools
from bisect import bisect_left

from pyroaring import BitMap

from shard.query.context import SearchContext
from shard.query.derivations import Derivations
from shard.query.occurrences import DocMatcher, Occurrence
from shard.query.parse import ParsedQuery
from shard.query.ranking.coverage import Kept

MAX_PAIR_COST = 3
"""Words 4 or more positions apart, or in different attributes, are as far as it gets."""
_POSITION_BUCKETS = (0, 1, 2, 5, 8, 12, 17, 25, 65, 257, 1025)
MAX_POSITION_COST = len(_POSITION_BUCKETS) - 1

EXACT_MATCH, MATCHES_START = 0, 1


EXACT_POSITIONS = 16
"""Positions below this are kept as they are; later ones only tell their bucket (as the reference)."""


def position_cost(distance: int) -> int:
    """Word distances bucketed 0, 1, 2-4, 5-7, 8-11, 12-16, 17-24, 25-64, 65-256, 257-1024, >1024."""
    return bisect_left(_POSITION_BUCKETS, distance + 1) - 1


def word_position_cost(position: int, wanted: int) -> int:
    """The cost of a query word at ``wanted`` found at ``position`` in its attribute.

    Near the start the distance counts; from position 16 on, the reference engine keeps only a
    coarse bucket of the position itself (16-23, 24-64, 65-256, ...), whatever the query position:
    measured on it, a word at 16 costs 6 and one at 24 costs 7 for the first and second query word alike.
    """
    if position < EXACT_POSITIONS:
        return position_cost(abs(position - wanted))
    return position_cost(24 if position < 24 else max(position, 25))


class DocumentCosts:
    """Per-document occurrences of the query, cached for every rule and kept set that asks."""

    def __init__(
        self, ctx: SearchContext, query: ParsedQuery, derivations: list[Derivations], matcher: DocMatcher
    ) -> None:
        self.ctx = ctx
        self.query = query
        self.derivations = derivations
        self.matcher = matcher
        self.by_attribute = ctx.settings.get("proximityPrecision") == "byAttribute"
        self._occurrences: dict[int, list[Occurrence]] = {}
        self._evaluated = BitMap()
        """The documents in ``_occurrences``: their records were read and matched."""
        self._per_term: dict[tuple[int, Kept, int | None], dict[int, list[Occurrence]]] = {}
        self._spans: dict[Kept, list[range | None]] = {}
        self._kept_words: dict[Kept, tuple[str, ...]] = {}
        """The kept terms' words in query order, compared with records' word tuples."""
        self._holdings: dict[int, set[str]] = {}
        self._prepared = BitMap()

    def evaluated(self) -> int:
        return len(self._evaluated)

    def unevaluated(self, docs: BitMap) -> int:
        """How many of ``docs`` scoring would read for the first time."""
        return docs.difference_cardinality(self._evaluated)

    def prepare(self, docs: BitMap) -> None:
        """Learn which query words the documents about to be scored hold, in one pass over postings."""
        pending = docs - self._prepared
        if len(pending) > 1:
            holdings = self.matcher.holdings(self.ctx, pending)
            if holdings is not None:
                self._holdings.update(holdings)
                self._prepared |= pending

    def occurrences(self, doc_id: int) -> list[Occurrence]:
        found = self._occurrences.get(doc_id)
        if found is None:
            record = self.ctx.record(doc_id)
            found = self.matcher.occurrences(record, self._holdings.get(doc_id))
            self._occurrences[doc_id] = found
            self._evaluated.add(doc_id)
        return found

    def per_term(self, doc_id: int, kept: Kept, typos: int | None = None) -> dict[int, list[Occurrence]]:
        """Occurrences of each kept term, through derivations lying wholly inside the kept set and,
        below the typo rule (``typos``: its bucket's cost), fitting that cost."""
        key = (doc_id, kept, typos)
        cached = self._per_term.get(key)
        if cached is not None:
            return cached
        spans = self._spans.get(kept)
        if spans is None:
            spans = self._spans[kept] = self._spans_inside(kept)
        inside = [
            (occurrence, span)
            for occurrence in self.occurrences(doc_id)
            if (span := spans[occurrence.derivation]) is not None
        ]
        if typos is not None:
            inside = _fitting(inside, kept, typos)
        result: dict[int, list[Occurrence]] = {term: [] for term in kept}
        for occurrence, span in inside:
            for term in span:
                result[term].append(occurrence)
        self._per_term[key] = result
        return result

    def _spans_inside(self, kept: Kept) -> list[range | None]:
        """Each derivation's terms when they all lie in ``kept``, else None."""
        members = set(kept)
        spans: list[range | None] = []
        for derivation in self.derivations:
            span = range(derivation.first, derivation.last + 1)
            spans.append(span if all(term in members for term in span) else None)
        return spans

    # proximity

    def proximity_max(self, kept: Kept) -> int:
        return MAX_PAIR_COST * len(_pairs(kept))

    def proximity(self, doc_id: int, kept: Kept, typos: int | None = None) -> int:
        pairs = _pairs(kept)
        if not pairs:
            return 0
        terms = self.per_term(doc_id, kept, typos)
        phrases = self.query.terms
        return sum(
            self._pair_cost(terms[left], terms[right], phrases[left].phrase or phrases[right].phrase)
            for left, right in pairs
        )

    def _pair_cost(self, left: list[Occurrence], right: list[Occurrence], forward_only: bool) -> int:
        """The nearest pair's cost; next to a phrase only the query's order counts (the reference
        gives a phrase's reversed neighbour the largest cost)."""
        best = MAX_PAIR_COST
        for a in left:
            for b in right:
                if a.field_id != b.field_id:
                    continue
                if a is b or self.by_attribute:
                    return 0
                if b.start > a.end:
                    distance = b.start - a.end
                elif forward_only or b.end >= a.start:
                    # One word matching both terms (``as`` for ``as a``) is no pair on the reference.
                    continue
                else:
                    distance = a.start - b.end + 1
                best = min(best, max(distance, 1) - 1)
                if best == 0:
                    return 0
        return best

    # attribute rank and word position

    def attribute_max(self, kept: Kept) -> int:
        return self.ctx.max_weight * len(kept)

    def attribute(self, doc_id: int, kept: Kept, typos: int | None = None) -> int:
        weight = self.ctx.weight
        return sum(
            min((weight(occurrence.field_id) for occurrence in found), default=self.ctx.max_weight)
            for found in self.per_term(doc_id, kept, typos).values()
        )

    def word_position_max(self, kept: Kept) -> int:
        return MAX_POSITION_COST * len(kept)

    def word_position(self, doc_id: int, kept: Kept, typos: int | None = None) -> int:
        terms = self.query.terms
        cost = 0
        for term, found in self.per_term(doc_id, kept, typos).items():
            if found:
                wanted = terms[term].position
                cost += min(word_position_cost(occurrence.start, wanted) for occurrence in found)
            else:
                cost += MAX_POSITION_COST
        return cost

    # exactness

    def exactness(self, doc_id: int, kept: Kept, typos: int | None = None) -> tuple[int, int]:
        """(class, exact words): class 0 = an attribute equals the kept terms, 1 = one starts with
        them, 2 = neither, then ranked by how many kept terms matched their own word.

        As on the reference: only the words bucket's kept terms count (``Vezzano`` equals the query
        ``vezzano ligure`` once ``ligure`` is dropped), and they must stand at consecutive positions
        (a hard separator between them, as in ``I, Tonya``, is no exact match)."""
        wanted = self._kept_words.get(kept)
        if wanted is None:
            terms = self.query.terms
            wanted = tuple(word for term in kept for word in terms[term].words if word is not None)
            self._kept_words[kept] = wanted
        allowed = self.ctx.allowed_fields
        if wanted:
            starts = False
            first, size = wanted[0], len(wanted)
            for entry in self.ctx.record(doc_id).fields:
                words = entry.words
                # Both classes need the field's first word; most fields fail here, before any slice.
                if not words or words[0] != first or (allowed is not None and entry.field_id not in allowed):
                    continue
                positions = entry.positions
                if words[:size] != wanted or positions[size - 1] - positions[0] != size - 1:
                    continue
                if len(words) == size:
                    return EXACT_MATCH, len(kept)
                if positions[0] == 0:
                    starts = True
            if starts:
                return MATCHES_START, len(kept)
        exact = sum(
            1
            for found in self.per_term(doc_id, kept, typos).values()
            if any(occurrence.match.exact for occurrence in found)
        )
        return 2, exact


def _fitting(
    inside: list[tuple[Occurrence, range]], kept: Kept, typos: int
) -> list[tuple[Occurrence, range]]:
    """The occurrences some match of the whole kept set within ``typos`` can use: an occurrence's own
    cost plus the least the other kept terms cost in this document (a term an n-gram covers counts
    0, a lower bound) must fit. The document's bucket is its cheapest match, so they all fit exactly."""
    least = dict.fromkeys(kept, typos + 1)
    for occurrence, span in inside:
        cost = occurrence.match.cost if len(span) == 1 else 0
        for term in span:
            least[term] = min(least[term], cost)
    total = sum(least.values())
    return [
        (occurrence, span)
        for occurrence, span in inside
        if occurrence.match.cost + total - sum(least[term] for term in span) <= typos
    ]


def _pairs(kept: Kept) -> list[tuple[int, int]]:
    """Consecutive kept terms that are also consecutive in the query (a dropped term breaks a pair)."""
    return [(left, right) for left, right in itertools.pairwise(kept) if right == left + 1]
