"""The ranking rules that need word positions, computed per document from its token record.

Each returns a cost (0 = best) and the largest possible cost for the kept terms, so the rule's rank is
``max + 1 - cost`` out of ``max + 1`` (search.md §7.5).
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right

from pyroaring import BitMap

from shard.query.context import SearchContext
from shard.query.derivations import Derivations
from shard.query.occurrences import DocMatcher, Occurrence
from shard.query.parse import ParsedQuery
from shard.query.ranking.coverage import Kept
from shard.query.vocabulary import prefix_words

MAX_PAIR_COST = 3
"""Words 4 or more positions apart, or in different attributes, are as far as it gets."""
_POSITION_BUCKETS = (0, 1, 2, 5, 8, 12, 17, 25, 65, 257, 1025)
MAX_POSITION_COST = len(_POSITION_BUCKETS) - 1
_PREFIX_TABLE_LENGTH, _PREFIX_TABLE_WORDS = 4, 100
"""The prefixes the reference engine keeps word-pair tables for (see ``_common_prefix``)."""

EXACT_MATCH, MATCHES_START = 0, 1


_FEW_LEFT = 4
"""Up to this many left occurrences, comparing every pair costs less than bisection tables."""

EXACT_POSITIONS = 16
"""Positions below this are kept as they are; later ones only tell their bucket (as the reference)."""


def position_cost(distance: int) -> int:
    """Word distances bucketed 0, 1, 2-4, 5-7, 8-11, 12-16, 17-24, 25-64, 65-256, 257-1024, >1024."""
    return bisect_left(_POSITION_BUCKETS, distance + 1) - 1


def word_position_cost(position: int, wanted: int, offset: int = 0) -> int:
    """The cost of a query word at ``wanted`` found at ``position`` in its attribute.

    Near the start the distance counts; from position 16 on, the reference engine keeps only a
    coarse bucket of the position itself (16-23, 24-64, 65-256, ...), whatever the query position:
    measured on it, a word at 16 costs 6 and one at 24 costs 7 for the first and second query word alike.
    ``offset``: the term's place inside an n-gram found there (``wanted`` is then the n-gram's first
    term's): the reference counts each later term of a concatenation that much further (measured:
    `sun flower` finding `sunflower` at 1 costs 1 + 2, at 16 costs 6 + 7; `garden sun flower`
    finding `garden aa sunflower` costs 0 + 1 + 2).
    """
    if position < EXACT_POSITIONS:
        return position_cost(abs(position - wanted) + offset)
    return position_cost((24 if position < 24 else max(position, 25)) + offset)


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
        self._indexed_terms: dict[int, bool] = {}
        self._common_prefixes: dict[int, bool] = {}
        self._holdings: dict[int, set[str]] = {}
        self._prepared = BitMap()
        self._pair_plans: dict[Kept, list[tuple[int, int, bool | None, bool]]] = {}
        self._spanning = bool(matcher.phrases)
        """Whether some occurrence can span several words (only phrase matches do)."""

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
        inside = _through_ngrams(inside, kept)
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
        plan = self._pair_plans.get(kept)
        if plan is None:
            plan = self._pair_plans[kept] = self._pair_plan(kept)
        if not plan:
            return 0
        terms = self.per_term(doc_id, kept, typos)
        cost = 0
        for left, right, backward, shareable in plan:
            cost += self._pair_cost(terms[left], terms[right], backward, shareable)
        return cost

    def _pair_plan(self, kept: Kept) -> list[tuple[int, int, bool | None, bool]]:
        """Per word pair of ``kept``, what does not depend on the document: the pair, whether a
        reversed neighbour counts (see ``_pair_cost``) and whether one occurrence can stand for both
        terms (only through a derivation spanning them both, an n-gram)."""
        phrases = self.query.terms
        plan: list[tuple[int, int, bool | None, bool]] = []
        for left, right in _pairs(kept):
            if phrases[left].phrase or phrases[right].phrase:
                backward: bool | None = False
            else:
                backward = None if self._common_prefix(right) else True
            shareable = any(d.first <= left and d.last >= right for d in self.derivations)
            plan.append((left, right, backward, shareable))
        return plan

    def _common_prefix(self, term: int) -> bool:
        """Whether ``term`` is a prefix the reference keeps a pair table for: at most 4 letters,
        starting 100 words or more. Through it a word pairs with the words the prefix stands for in
        query order only; in reverse only with the prefix's own word (measured on the reference: 99
        words, ``qzz alpha`` is 1 reversed for ``alpha q``; 100 words, as far as it gets). A shard
        knows its own words only; with several, the index's count is estimated as their midpoint
        (from this shard's count to all shards' count added up): exact for one shard."""
        known = self._common_prefixes.get(term)
        if known is None:
            derivation = self.derivations[term]
            prefix = derivation.prefix
            known = False
            if prefix is not None and self.query.terms[term].prefix and len(prefix) <= _PREFIX_TABLE_LENGTH:
                listed = len(derivation.prefix_words) + (0 if derivation.prefix_complete else 1)
                known = listed * (self.ctx.shards + 1) >= 2 * _PREFIX_TABLE_WORDS
            self._common_prefixes[term] = known
        return known

    def _pair_cost(
        self, left: list[Occurrence], right: list[Occurrence], backward: bool | None, shareable: bool
    ) -> int:
        """The nearest pair's cost. ``backward``: whether a right word before a left one counts (True),
        never (False: next to a phrase, where the reference gives a reversed neighbour the largest
        cost) or only when it is the right term's own word (None: see ``_common_prefix``). One word
        matching both terms (``as`` for ``as a``) is no pair, as on the reference, unless it is one
        match of both (an n-gram, when ``shareable``)."""
        if not left or not right:
            return MAX_PAIR_COST
        if shareable:
            shared = {id(occurrence) for occurrence in left}
            if any(id(occurrence) in shared for occurrence in right):
                return 0
        if self.by_attribute:
            same = {a.field_id for a in left}.intersection(b.field_id for b in right)
            return 0 if same else MAX_PAIR_COST
        if self._spanning and (any(a.start != a.end for a in left) or any(b.start != b.end for b in right)):
            return _spans_pair_cost(left, right, backward)
        if len(left) <= _FEW_LEFT:
            return _few_pair_cost(left, right, backward)
        # Single words (nearly always): the nearest left word on each side of each right word, found
        # by bisection, instead of every pair (a prefix and a common word meet hundreds of times).
        lefts: dict[int, list[int]] = {}
        for a in left:
            lefts.setdefault(a.field_id, []).append(a.start)
        for spots in lefts.values():
            spots.sort()
        best = MAX_PAIR_COST
        for b in right:
            found = lefts.get(b.field_id)
            if found is None:
                continue
            spots, position = found, b.start
            before = bisect_left(spots, position)
            if before:
                best = min(best, position - spots[before - 1] - 1)
            if backward or (backward is None and b.match.exact):
                after = bisect_right(spots, position, before)
                if after < len(spots):
                    best = min(best, spots[after] - position)
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
        derivations = self.derivations
        for term, found in self.per_term(doc_id, kept, typos).items():
            if found:
                wanted = terms[term].position
                cost += min(
                    word_position_cost(
                        match.start if match.start == match.end else self._phrase_at(doc_id, match), wanted
                    )
                    if (first := derivations[match.derivation].first) == term
                    else word_position_cost(match.start, (at := terms[first].position), wanted - at)
                    for match in found
                )
            else:
                cost += MAX_POSITION_COST
        return cost

    def _phrase_at(self, doc_id: int, occurrence: Occurrence) -> int:
        """Where the word-position rule places a phrase match (quoted, or a split word): where its
        first word first appears in the document, wherever that is, as the reference does
        (`"news paper"` in `news x y z w v news paper` counts at 0)."""
        record = self.ctx.record(doc_id)
        entry = next(entry for entry in record.fields if entry.field_id == occurrence.field_id)
        if occurrence.start not in entry.positions:
            return occurrence.start  # the phrase opens with a stop word, which records do not keep
        first = entry.words[entry.positions.index(occurrence.start)]
        allowed = self.ctx.allowed_fields
        return min(
            position
            for field_id, position in record.places((first,))[first]
            if allowed is None or field_id in allowed
        )

    # exactness

    def exactness(self, doc_id: int, kept: Kept, typos: int | None = None) -> tuple[int, int]:
        """(class, exact words): class 0 = an attribute equals the kept terms, 1 = one starts with
        them, 2 = neither, then ranked by how many kept terms matched their own word.

        As on the reference: only the words bucket's kept terms count (``Vezzano`` equals the query
        ``vezzano ligure`` once ``ligure`` is dropped), and of those only the leading ones whose own
        word can match here (``_placed``). Each of their words must stand at its query position in
        some attribute (a hard separator between them, as in ``I, Tonya``, is no start) and one
        attribute must hold them all; it is equal when it has as many words as they are."""
        placed = self._placed(doc_id, kept, typos)
        if placed:
            kind = self._attribute_match(doc_id, placed)
            if kind is not None:
                return kind, len(kept)
        exact = sum(
            1
            for found in self.per_term(doc_id, kept, typos).values()
            if any(occurrence.match.exact for occurrence in found)
        )
        return 2, exact

    def _placed(self, doc_id: int, kept: Kept, typos: int | None) -> list[tuple[str, int]]:
        """The words the start check looks for, each with its query position: those of the leading
        kept terms whose own word is in the vocabulary and, below the typo rule, matched this document
        without typo (``bet``, typed on the way to ``beta``, and ``tonya`` matched as ``tony`` drop
        out). A term dropping out before one that does not leaves nothing to check, as on the reference."""
        found = None if typos is None else self.per_term(doc_id, kept, typos)
        usable = [self._usable(term, found) for term in kept]
        if False in usable:
            cut = usable.index(False)
            if any(usable[cut:]):
                return []
            kept = kept[:cut]
        placed: list[tuple[str, int]] = []
        for term in kept:
            query_term = self.query.terms[term]
            start = query_term.position
            placed.extend((word, start + gap) for gap, word in enumerate(query_term.words) if word)
        return placed

    def _usable(self, term: int, found: dict[int, list[Occurrence]] | None) -> bool:
        if self.query.terms[term].phrase:
            return True
        # A match costing nothing is the term's own word, a word it prefixes or a synonym: no n-gram.
        return self._indexed(term) and (found is None or any(match.match.cost == 0 for match in found[term]))

    def _indexed(self, term: int) -> bool:
        """Whether the term's own word is in the vocabulary: one cursor seek, no postings read. This
        shard's: a word only another shard holds counts as absent, so a rare word can make a start
        here that one shard would not (common words, and words no document has, agree)."""
        known = self._indexed_terms.get(term)
        if known is None:
            word, ctx = self.query.terms[term].word, self.ctx
            known = prefix_words(ctx.txn, ctx.env.words, ctx.index_id, word, 1) == [word]
            self._indexed_terms[term] = known
        return known

    def _attribute_match(self, doc_id: int, placed: list[tuple[str, int]]) -> int | None:
        """EXACT_MATCH, MATCHES_START or None for the ``placed`` words in this document."""
        allowed = self.ctx.allowed_fields
        record = self.ctx.record(doc_id)
        places = record.places(word for word, _ in placed)
        holders: set[int] | None = None
        for word, position in placed:
            spots = [spot for spot in places[word] if allowed is None or spot[0] in allowed]
            if all(at != position for _, at in spots):
                return None
            fields = {field_id for field_id, _ in spots}
            holders = fields if holders is None else holders & fields
            if not holders:
                return None
        if holders is None:
            return None
        size = len(placed)
        if any(entry.field_id in holders and len(entry.words) == size for entry in record.fields):
            return EXACT_MATCH
        return MATCHES_START


def _through_ngrams(inside: list[tuple[Occurrence, range]], kept: Kept) -> list[tuple[Occurrence, range]]:
    """A kept term the document holds only inside n-grams (`sunflower` for `sun flower`, no `sun`)
    is matched along a path through an n-gram, as the reference matches it: the other terms that
    n-gram covers then count only through n-grams too, not through their own words elsewhere (its
    `flower` in `flower x sunflower` is neither an exact word nor an earlier position there)."""
    own = {span.start for _, span in inside if len(span) == 1}
    if len(own) == len(kept):
        return inside
    lacking = set(kept) - own
    tied = {term for _, span in inside if len(span) > 1 and not lacking.isdisjoint(span) for term in span}
    return [entry for entry in inside if len(entry[1]) > 1 or entry[1].start not in tied]


def _fitting(
    inside: list[tuple[Occurrence, range]], kept: Kept, typos: int
) -> list[tuple[Occurrence, range]]:
    """The occurrences some match of the whole kept set within ``typos`` can use: an occurrence's own
    cost plus the least the other kept terms cost in this document (a term an n-gram covers counts
    0, a lower bound) must fit. The document's bucket is its cheapest match, so they all fit exactly."""
    if typos == 0:
        # Every kept term has a match costing nothing here (the bucket is the cheapest match).
        return [entry for entry in inside if not entry[0].match.cost]
    least = dict.fromkeys(kept, typos + 1)
    for occurrence, span in inside:
        cost = occurrence.match.cost if len(span) == 1 else 0
        for term in span:
            least[term] = min(least[term], cost)
    total = sum(least.values())
    # What an occurrence may cost, per span (a derivation's terms: a few distinct ones per query).
    allowed: dict[int, int] = {}
    for _, span in inside:
        if id(span) not in allowed:
            allowed[id(span)] = typos - total + sum(least[term] for term in span)
    return [entry for entry in inside if entry[0].match.cost <= allowed[id(entry[1])]]


def _few_pair_cost(left: list[Occurrence], right: list[Occurrence], backward: bool | None) -> int:
    """``_pair_cost`` of single words when the left term has few: every pair, no bisection tables."""
    best = MAX_PAIR_COST
    for b in right:
        field_id, position = b.field_id, b.start
        reverse = backward or (backward is None and b.match.exact)
        for a in left:
            if a.field_id != field_id:
                continue
            if a.start < position:
                distance = position - a.start - 1
            elif a.start > position and reverse:
                distance = a.start - position
            else:
                continue
            if distance < best:
                if distance == 0:
                    return 0
                best = distance
    return best


def _spans_pair_cost(left: list[Occurrence], right: list[Occurrence], backward: bool | None) -> int:
    """``_pair_cost`` when a match spans several words (a phrase, a split word): every pair."""
    best = MAX_PAIR_COST
    for a in left:
        for b in right:
            if a.field_id != b.field_id:
                continue
            if b.start > a.end:
                distance = b.start - a.end
            elif b.end >= a.start or not (backward or (backward is None and b.match.exact)):
                continue
            else:
                distance = a.start - b.end + 1
            best = min(best, distance - 1)
            if best == 0:
                return 0
    return best


def _pairs(kept: Kept) -> list[tuple[int, int]]:
    """Consecutive kept terms that are also consecutive in the query (a dropped term breaks a pair)."""
    return [(left, right) for left, right in itertools.pairwise(kept) if right == left + 1]
