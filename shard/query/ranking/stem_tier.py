"""Stemmed matches rank a tier below every other match (the design brief: exact forms rank first).

The documents a query matches without its stems (the first tier) are ranked exactly as if there were
no stems, which is how the reference engine ranks them: a document holding one word of the query and
only the stem of another ranks as a one-word match. The documents that need a stem to match at all
(the second tier) come after all of them, ranked among themselves by the same rules over every
derivation, a stem costing the typo rule one. Counts and facets cover both tiers.

A second-tier hit shows its own ranks in ``_rankingScoreDetails``; its ``_rankingScore`` folds them
below the first tier's worst bucket (``Ranker.floor_ranks`` then ``STEM_TIER``), so scores still
follow the order of hits, and its merge key starts with its tier, so the gateway never lets it pass
a first-tier hit (not even one a budget left unranked, whose score sits at its bucket's bottom).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from pyroaring import BitMap

from shard.query.context import SearchContext
from shard.query.derivations import Derivations
from shard.query.distinct import Distinct
from shard.query.parse import ParsedQuery
from shard.query.ranking.bucket_sort import RankedDoc, Ranker, RankingOutcome
from shard.query.ranking.coverage import Coverage
from shard.query.ranking.rules import Rule
from shard.query.ranking.score import Rank, details, score, score_groups, sort_key

STEM_TIER = Rank("stemTier", ((1, 2),))
"""Below the first tier's worst bucket: the lower half of its interval holds the second tier."""


class TieredRanker:
    """``Ranker``'s search interface over the two tiers; the second tier's ranker is built only
    when stems match documents that nothing else does."""

    def __init__(
        self,
        ctx: SearchContext,
        query: ParsedQuery,
        derivations: list[Derivations],
        *,
        term_counts: list[int] | None = None,
        **options: Any,
    ) -> None:
        """``options``: ``Ranker``'s (``strategy``, ``threshold``, ``sort``, ``distinct``), the same
        for both tiers; ``term_counts``: the frequency strategy's counts, ``count_terms``' shape."""
        exact_counts, stemmed_counts = _split_counts(term_counts, len(query.terms))
        stemless = [derivation.without_stem() for derivation in derivations]
        self.exact = Ranker(ctx, query, stemless, term_counts=exact_counts, **options)
        self.rules: list[Rule] = self.exact.rules
        self._stemmed_args: dict[str, Any] = {**options, "term_counts": stemmed_counts}
        self._ctx, self._query, self._derivations = ctx, query, derivations
        self._distinct: Distinct | None = options.get("distinct")
        self._same_kept_sets = options["strategy"] != "frequency"
        """Only the frequency strategy's kept sets depend on the tier (on its term counts)."""
        self._coverage = Coverage(ctx, derivations, base=self.exact.coverage)
        self._tiers: tuple[BitMap, BitMap] | None = None

    @cached_property
    def stemmed(self) -> Ranker:
        ranker = Ranker(
            self._ctx, self._query, self._derivations, coverage=self._coverage, **self._stemmed_args
        )
        ranker.deadline = self.exact.deadline
        return ranker

    def _scoring(self) -> Ranker:
        """The second tier's ranker, placed under the first tier once it scores (not to count it)."""
        ranker = self.stemmed
        if not ranker.floor:
            ranker.floor = (*self.exact.floor_ranks(), STEM_TIER)
        return ranker

    def tiers(self) -> tuple[BitMap, BitMap]:
        """The documents matching without stems, and those matching only with them."""
        if self._tiers is None:
            first = self.exact.universe()
            second = BitMap()
            if self._stems_add_documents():
                second = self._stemmed_universe() - first
            self._tiers = (first, second)
        return self._tiers

    def _stemmed_universe(self) -> BitMap:
        """``self.stemmed.universe()``, without building that ranker when the kept sets are the first
        tier's: it is needed only if the second tier is ranked."""
        if not self._same_kept_sets:
            return self.stemmed.universe()
        coverage = self._coverage
        return BitMap.union(*(coverage.matching(kept) for kept in self.exact.kept_sets))

    def _stems_add_documents(self) -> bool:
        """Whether a term's stem matches a document its other derivations do not: else the second
        tier is empty, and the stemmed ranker is never built."""
        exact, stemmed = self.exact.coverage, self._coverage
        return any(
            derivation.stem is not None
            and stemmed.sets(number).all().difference_cardinality(exact.sets(number).all()) > 0
            for number, derivation in enumerate(self._derivations)
        )

    def universe(self) -> BitMap:
        """Both tiers (the first tier's own set when the second is empty: not to be changed)."""
        first, second = self.tiers()
        return first | second if second else first

    def _split(self, docs: BitMap) -> tuple[BitMap, BitMap]:
        """``docs`` (of the universe) by tier; no set operation when the second tier is empty."""
        _, second = self.tiers()
        rest = docs & second if second else second
        return (docs - rest if rest else docs), rest

    def rank(self, docs: BitMap, wanted: int) -> RankingOutcome:
        head, rest = self._split(docs)
        outcome = self.exact.rank(head, wanted)
        if not rest:
            return outcome
        missing = wanted - len(outcome.docs)
        if missing <= 0:
            # The page is full: the second tier only counts (as a bucket never explored counts).
            distinct = self._distinct
            more = len(rest) if distinct is None else rest.difference_cardinality(distinct.excluded)
            return RankingOutcome(outcome.docs, outcome.candidates + more)
        stemmed = self._scoring()
        if self.exact.budget is not None:
            # One record budget for the whole query: the second tier gets what the first left.
            stemmed.budget = max(0, self.exact.budget - self.exact.costs.evaluated())
        ranked = stemmed.rank(rest, missing)
        return RankingOutcome(outcome.docs + ranked.docs, outcome.candidates + ranked.candidates)

    def count(self, docs: BitMap, limit: int) -> int:
        """``Ranker.count`` over both tiers, the first counted first."""
        if self.exact.threshold is None:
            return len(docs)
        head, rest = self._split(docs)
        counted = self.exact.count(head, limit)
        if not rest:
            return counted
        if counted >= limit:
            return counted + len(rest)
        return counted + self._scoring().count(rest, limit - counted)

    def dropped(self) -> BitMap:
        """After ``rank``: the documents of explored buckets the threshold dropped, both tiers."""
        if "stemmed" in self.__dict__:  # built (cached_property)
            return self.exact.dropped | self.stemmed.dropped
        return self.exact.dropped

    def kept(self, docs: BitMap) -> BitMap:
        head, rest = self._split(docs)
        kept = self.exact.kept(head)
        return kept | self._scoring().kept(rest) if rest else kept


def count_terms(ctx: SearchContext, query: ParsedQuery, derivations: list[Derivations]) -> list[int]:
    """Each term's documents without its stem, then with it: the gateway sums them over shards, and
    each tier's ranker drops terms by its own counts under the frequency strategy."""
    exact = Coverage(ctx, [derivation.without_stem() for derivation in derivations])
    stemmed = Coverage(ctx, derivations, base=exact)
    indexes = [term.index for term in query.terms]
    return [len(exact.term_docs(index)) for index in indexes] + [
        len(stemmed.term_docs(index)) for index in indexes
    ]


def _split_counts(counts: list[int] | None, terms: int) -> tuple[list[int] | None, list[int] | None]:
    if counts is None or len(counts) != 2 * terms:
        return counts, counts
    return counts[:terms], counts[terms:]


def hit_scores(doc: RankedDoc) -> tuple[list[Any], float, dict[str, Any], list[Any]]:
    """The hit's merge key (its tier first), score, score details and federation score groups."""
    placed = doc.floor + doc.ranks
    key = [0 if doc.floor else 1, *sort_key(doc.ranks)]
    return key, score(placed), details(doc.ranks), score_groups(placed)
