"""Bucket sort: rule after rule, each bucket refined by the next rule, until enough documents.

Only the buckets needed for the requested page are ever split, so the cost follows the page, not
the number of matches. Documents left in a bucket after the last rule keep internal id order, which
is insertion order on every shard, so the gateway can merge shards by (ranks, insertion order).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from pyroaring import BitMap

from common.sort import SortCriterion
from shard.index.settings import displayed_attributes
from shard.query.context import SearchContext
from shard.query.derivations import Derivations
from shard.query.distinct import Distinct
from shard.query.occurrences import DocMatcher
from shard.query.parse import ParsedQuery
from shard.query.ranking.coverage import Coverage, Kept
from shard.query.ranking.marks import TermMarks
from shard.query.ranking.positional import DocumentCosts
from shard.query.ranking.rules import DEFAULT_RULES, Rule, configured_rules
from shard.query.ranking.score import SKIPPED, Rank, score
from shard.query.ranking.sort import sort_rules

RECORD_BUDGET = 2_000
"""Documents a query may score from their token records, over the whole index (each shard takes its
share, ``SearchContext.share``), when ``searchCutoffMs`` is not set: larger buckets are left unranked
(as the cutoff does) so that a one-letter query stays fast on a large index. An explicit
``searchCutoffMs`` replaces this budget with the time limit alone."""
DEFAULT_CUTOFF_MS = 1500

CostKey = TypeVar("CostKey", int, tuple[int, int])
Scope = tuple[Kept, int | None]
"""What the rules still to apply see of a bucket: its kept terms and, once the typo rule ranked, its cost."""


@dataclass(frozen=True)
class RankedDoc:
    doc_id: int
    ranks: tuple[Rank, ...]
    floor: tuple[Rank, ...] = ()
    """Ranks counted before the document's own in its score, not shown (``Ranker.floor``)."""


@dataclass
class RankingOutcome:
    docs: list[RankedDoc]
    candidates: int
    """Matching documents, minus those the score threshold dropped in explored buckets."""


class Ranker:
    def __init__(
        self,
        ctx: SearchContext,
        query: ParsedQuery,
        derivations: list[Derivations],
        *,
        strategy: str,
        threshold: float | None,
        term_counts: list[int] | None = None,
        sort: Sequence[SortCriterion] = (),
        distinct: Distinct | None = None,
        ranking_rules: Sequence[str] | None = None,
        coverage: Coverage | None = None,
        rules: list[Rule] | None = None,
    ) -> None:
        """``ranking_rules``: the rules to apply instead of the index's (document reads: ``["sort"]``);
        ``coverage``: the derivations' document sets, when resolved already; ``rules``: the rules
        themselves (a semantic search's, ``shard/query/semantic.py``)."""
        self.ctx = ctx
        self.query = query
        self.coverage = coverage or Coverage(ctx, derivations)
        terms = query.terms
        nearest_to = terms[0].position if len(terms) == 1 else None
        matcher = DocMatcher(derivations, ctx.allowed_fields, ctx.exact_fields, nearest_to)
        self.costs = DocumentCosts(ctx, query, derivations, matcher)
        self.marks = TermMarks(ctx, query, derivations)
        names = ranking_rules or ctx.settings.get("rankingRules") or DEFAULT_RULES
        self.rules: list[Rule] = rules or configured_rules(
            names,
            strategy,
            sort_rules(names, sort, displayed_attributes(ctx.settings)),
            placeholder=query.placeholder,
        )
        self.strategy = strategy
        self.threshold = threshold
        self.term_counts = term_counts
        self.kept_sets = self._kept_sets()
        cutoff = ctx.settings.get("searchCutoffMs")
        self.deadline = time.monotonic() + (DEFAULT_CUTOFF_MS if cutoff is None else cutoff) / 1000
        self.budget = ctx.share(RECORD_BUDGET) if cutoff is None else None
        self.dropped = BitMap()
        """Documents of explored buckets the threshold dropped (distinct may have excluded some too)."""
        self.distinct = distinct
        self.floor: tuple[Rank, ...] = ()
        """Ranks counted before each document's own in its score: the stem tier's (``stem_tier.py``)."""

    def floor_ranks(self) -> tuple[Rank, ...]:
        """The worst bucket the rules can give: the most relaxed kept set, each rule's worst rank,
        no value for sorts. Every document ranked here scores at least as much (unless a budget or
        the cutoff left its bucket unranked)."""
        kept = self.kept_sets[-1]
        return tuple(rule.floor(self, kept) for rule in self.rules)

    def _kept_sets(self) -> list[Kept]:
        """The words rule's term sets, from all terms down to the most relaxed query."""
        terms = self.query.terms
        everything = tuple(term.index for term in terms)
        if self.strategy == "all":
            return [everything]
        droppable = [term.index for term in terms if not term.phrase]
        if self.strategy == "frequency":
            # Terms matching nothing go first, then the most frequent; counts summed over shards by the
            # gateway make every shard drop the same terms.
            counts = {index: self.term_count(index) for index in droppable}
            droppable.sort(key=lambda index: (counts[index] > 0, -counts[index], -index))
        else:
            droppable.reverse()
        # Phrases are never dropped (search.md §7.2): with one, every free word may go; without, the
        # last word standing stays.
        droppable_count = len(droppable) if len(droppable) < len(terms) else len(droppable) - 1
        sets = [everything]
        current = set(everything)
        for index in droppable[:droppable_count]:
            current.discard(index)
            sets.append(tuple(sorted(current)))
        return sets

    def term_count(self, term: int) -> int:
        if self.term_counts is not None and term < len(self.term_counts):
            return self.term_counts[term]
        return len(self.coverage.term_docs(term))

    def universe(self) -> BitMap:
        """Documents matching at least the most relaxed query (an n-gram may match a larger kept set
        in documents the relaxed one misses, so every set counts)."""
        return BitMap.union(*(self.coverage.matching(kept) for kept in self.kept_sets))

    def rank(self, docs: BitMap, wanted: int) -> RankingOutcome:
        found: list[RankedDoc] = []
        if wanted > 0 and docs:
            self._visit(0, docs, (self.kept_sets[0], None), (), found, wanted)
        gone = self.dropped if self.distinct is None else self.dropped | self.distinct.excluded
        return RankingOutcome(found, len(docs) - len(gone & docs))

    def count(self, docs: BitMap, limit: int) -> int:
        """How many of ``docs`` score at least the threshold (all of them without one). Every bucket
        that may still reach it is split down to the last rule, with no per-document budget (the
        cutoff still applies), so the answer depends neither on the page nor on how documents are
        spread over shards; once ``limit`` documents passed, the buckets not explored yet count
        whole (an estimate, as search.md §1.5 has it), so counting never ranks more than that."""
        if self.threshold is None:
            return len(docs)
        total = seen = 0
        for bucket, passed in self._passing(docs, self.threshold):
            seen += len(bucket)
            if passed:
                total += len(bucket)
                if total >= limit:
                    return total + len(docs) - seen
        return total

    def kept(self, docs: BitMap) -> BitMap:
        """The documents of ``docs`` that score at least the threshold, found as ``count`` finds them."""
        if self.threshold is None:
            return docs
        passing = (bucket for bucket, passed in self._passing(docs, self.threshold) if passed)
        return BitMap.union(BitMap(), *passing)

    def _passing(self, docs: BitMap, threshold: float) -> Iterator[tuple[BitMap, bool]]:
        """Every bucket in rank order down to where the threshold decides it: (documents, passed)."""
        self.budget = None
        if docs:
            yield from self._passing_buckets(0, docs, (self.kept_sets[0], None), (), threshold)

    def _passing_buckets(
        self, depth: int, docs: BitMap, scope: Scope, ranks: tuple[Rank, ...], threshold: float
    ) -> Iterator[tuple[BitMap, bool]]:
        if (self.floor or ranks) and score(self.floor + ranks) < threshold:
            yield docs, False
            return
        if self._leaf(depth, ranks):
            yield docs, True
            return
        for bucket in self.rules[depth].buckets(self, docs, *scope):
            yield from self._passing_buckets(
                depth + 1, bucket.docs, (bucket.kept, bucket.typos), (*ranks, bucket.rank), threshold
            )

    def _leaf(self, depth: int, ranks: tuple[Rank, ...]) -> bool:
        """Past the last rule, or a bucket the budget or cutoff left unranked: documents stay in id order."""
        return depth == len(self.rules) or bool(ranks and ranks[-1] is SKIPPED)

    def group(self, docs: BitMap, key: Callable[[int], CostKey]) -> dict[CostKey, list[int]] | None:
        """Documents grouped by a per-document key, or None when the budget or cutoff is exhausted."""
        costs = self.costs
        # Documents an earlier rule scored are counted once: their occurrences are cached.
        over_budget = self.budget is not None and costs.evaluated() + costs.unevaluated(docs) > self.budget
        if over_budget:
            return None
        if time.monotonic() > self.deadline:
            self.ctx.timed_out = True
            return None
        costs.prepare(docs)
        groups: dict[CostKey, list[int]] = {}
        for doc_id in docs:
            groups.setdefault(key(doc_id), []).append(doc_id)
        return groups

    def _visit(
        self,
        depth: int,
        docs: BitMap,
        scope: Scope,
        ranks: tuple[Rank, ...],
        found: list[RankedDoc],
        wanted: int,
    ) -> None:
        if self.distinct is not None:
            # Documents a kept hit already excludes can never be kept: ranking them is wasted (with
            # few distinct values, nearly every candidate is excluded after the first hits).
            docs = docs - self.distinct.excluded
            if not docs:
                return
        threshold = self.threshold
        # The score of the ranks so far is the best any document below them can still reach.
        if threshold is not None and (self.floor or ranks) and score(self.floor + ranks) < threshold:
            self.dropped |= docs
            return
        if self._leaf(depth, ranks):
            for doc_id in docs:
                if self.distinct is not None and not self.distinct.keep(doc_id):
                    continue
                found.append(RankedDoc(doc_id, ranks, self.floor))
                if len(found) >= wanted:
                    return
            return
        for bucket in self.rules[depth].buckets(self, docs, *scope):
            self._visit(
                depth + 1, bucket.docs, (bucket.kept, bucket.typos), (*ranks, bucket.rank), found, wanted
            )
            if len(found) >= wanted:
                return
