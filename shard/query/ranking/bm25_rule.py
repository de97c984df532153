"""The ``bm25`` matching strategy in the bucket sort: one rule in place of the relevancy rules.

``words``, ``typo``, ``proximity``, ``attribute``/``attributeRank``/``wordPosition`` and
``exactness`` give way to one ``bm25`` rule standing where the first of them stood; ``sort`` and
custom ``field:asc|desc`` rules keep their places. Every query term qualifies a document (no term is
mandatory) and no term is cut (``parse.py``'s ten-term limit does not apply). There is no stem tier:
stems weigh less inside the score (``bm25.py``).

The rule yields its buckets lazily, best score first: documents are scored from their records in
decreasing order of their upper bound, and a score is yielded once no unscored document's bound
reaches it, so the page's hits get their exact scores, whatever the shard count, while the records
read follow the page. Past the index's record budget (``RECORD_BUDGET``, shared over shards, as the
other rules have it) or the cutoff, the documents not scored yet rank by their estimate instead.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
from pyroaring import BitMap

from shard.index.settings import displayed_attributes
from shard.query.context import SearchContext
from shard.query.derivations import Derivations
from shard.query.parse import MAX_TERMS, ParsedQuery
from shard.query.ranking.bm25 import Bm25Scorer, Bm25Stats, local_stats, rank_words
from shard.query.ranking.bm25_bounds import Bounds, IdArray, estimates
from shard.query.ranking.bm25_order import BoundOrder
from shard.query.ranking.bucket_sort import Ranker, RankingOutcome
from shard.query.ranking.coverage import Kept
from shard.query.ranking.rules import DEFAULT_RULES, Bucket, Rule
from shard.query.ranking.score import Rank
from shard.query.ranking.sort import in_place_of_relevancy, sort_rules
from shard.query.ranking.stem_tier import TieredRanker, count_terms

BM25 = "bm25"
SCALE = 10**12
"""A score's resolution in its rank step (the merge key compares ``rank / SCALE``)."""
_BATCH = 32
"""Documents scored between two checks of the bound."""


def term_limit(strategy: str) -> int | None:
    """How many query terms count: all of them with ``bm25``."""
    return None if strategy == BM25 else MAX_TERMS


def term_statistics(ctx: SearchContext, query: ParsedQuery, derivations: list[Derivations]) -> list[int]:
    """The counts of the gateway's first round: ``count_terms``' lists, then for ``bm25`` the shard's
    document count and words per ``searchableAttributes`` rank (summed over shards, ``Bm25Stats``)."""
    return [*count_terms(ctx, query, derivations), len(ctx.state.live), *rank_words(ctx)]


class Bm25Rule:
    name = BM25

    def __init__(self, stats: Bm25Stats | None) -> None:
        """``stats``: the index-wide statistics; None scores with this shard's own (a search the
        gateway sent without its first round)."""
        self._stats = stats
        self._scorer: Bm25Scorer | None = None
        self._bounds: Bounds | None = None

    def scorer(self, ranker: Ranker) -> Bm25Scorer:
        if self._scorer is None:
            stats = self._stats
            if stats is None:
                terms = range(len(ranker.query.terms))
                stats = local_stats(ranker.ctx, [len(ranker.coverage.term_docs(term)) for term in terms])
            self._scorer = Bm25Scorer(
                ranker.ctx, ranker.query, ranker.coverage.derivations, ranker.coverage, stats
            )
        return self._scorer

    def rank(self, ranker: Ranker, raw: float) -> Rank:
        scorer = self.scorer(ranker)
        normalised = scorer.normalised(raw)
        return Rank(self.name, ((round(normalised * SCALE), SCALE),), {"value": round(raw, 6)})

    def buckets(self, ranker: Ranker, docs: BitMap, kept: Kept, typos: int | None) -> Iterator[Bucket]:
        """With ``rankingScoreThreshold``, the documents whose bound cannot reach it are dropped at
        once and every other one is scored before the first bucket (within the budget), so the
        count does not depend on how far the page explored, nor on the shard count."""
        scorer = self.scorer(ranker)
        if self._bounds is None:
            self._bounds = Bounds(scorer)
        candidates = BoundOrder(self._bounds, docs)
        threshold = ranker.threshold
        if threshold is not None:
            ranker.dropped |= candidates.drop_unreachable(threshold, scorer.half)
        order: list[int] = []
        tops: list[float] = []
        heap: list[tuple[float, int]] = []
        budget = ranker.budget
        scored = position = 0
        while True:
            if position == len(order):
                order, tops = candidates.next_chunk()
                position = 0
                if not order and not heap:
                    return
            bound = tops[position] if position < len(order) else -1.0
            eager = threshold is not None and position < len(order)
            if heap and -heap[0][0] > bound and not eager:
                best = -heap[0][0]
                group = BitMap()
                while heap and -heap[0][0] == best:
                    group.add(heapq.heappop(heap)[1])
                yield Bucket(group, self.rank(ranker, best), kept, typos)
                continue
            late = time.monotonic() > ranker.deadline
            if late or (budget is not None and scored >= budget):
                # A cut by the clock depends on the machine: reported as degraded, never kept in a cache.
                ranker.ctx.timed_out = ranker.ctx.timed_out or late
                rest = np.concatenate((np.array(order[position:], dtype=np.uint32), candidates.remaining()))
                yield from self._estimated(ranker, heap, rest, kept, typos)
                return
            batch = order[position : position + _BATCH]
            position += len(batch)
            scored += len(batch)
            for doc_id in batch:
                raw = scorer.score(doc_id)
                if threshold is not None and scorer.normalised(raw) < threshold:
                    ranker.dropped.add(doc_id)
                else:
                    heapq.heappush(heap, (-raw, doc_id))

    def _estimated(
        self, ranker: Ranker, heap: list[tuple[float, int]], rest: IdArray, kept: Kept, typos: int | None
    ) -> Iterator[Bucket]:
        """Past the budget or the cutoff: the documents not scored (``rest``) rank by their estimates,
        among the scores already known, equal values in one bucket."""
        values = estimates(self.scorer(ranker))[rest]
        while heap or len(rest):
            best = max(-heap[0][0] if heap else -math.inf, float(values.max()) if len(rest) else -math.inf)
            group = BitMap()
            while heap and -heap[0][0] == best:
                group.add(heapq.heappop(heap)[1])
            same = values == best
            if same.any():
                group |= BitMap(rest[same].tolist())
                rest, values = rest[~same], values[~same]
            yield Bucket(group, self.rank(ranker, best), kept, typos)

    def floor(self, ranker: Ranker, kept: Kept) -> Rank:
        return Rank(self.name, ((0, SCALE),))


class Bm25Ranker(Ranker):
    """A ``Ranker`` whose candidates are the documents matching any term, ranked by ``Bm25Rule``."""

    def __init__(
        self,
        ctx: SearchContext,
        query: ParsedQuery,
        derivations: list[Derivations],
        *,
        term_counts: list[int] | None = None,
        **options: Any,
    ) -> None:
        names = ctx.settings.get("rankingRules") or DEFAULT_RULES
        ranks = ctx.max_weight + 1
        stats = None if term_counts is None else Bm25Stats.decode(term_counts, len(query.terms), ranks)
        sorts = sort_rules(names, options.get("sort", ()), displayed_attributes(ctx.settings))
        rules = in_place_of_relevancy(names, sorts, Bm25Rule(stats))
        super().__init__(ctx, query, derivations, term_counts=None, rules=rules, **options)

    def _kept_sets(self) -> list[Kept]:
        """Every term together (n-grams across terms), then each term alone: any term qualifies."""
        terms = tuple(term.index for term in self.query.terms)
        return [terms, *((term,) for term in terms if len(terms) > 1)]


class KeywordRanker:
    """The keyword leg's ranker, whatever the strategy, with ``TieredRanker``'s interface."""

    def __init__(
        self,
        ctx: SearchContext,
        query: ParsedQuery,
        derivations: list[Derivations],
        *,
        strategy: str,
        **options: Any,
    ) -> None:
        """``options``: ``TieredRanker``'s (``threshold``, ``term_counts``, ``sort``, ``distinct``)."""
        self.ranker: Ranker | TieredRanker
        if strategy == BM25 and not query.placeholder:
            self.ranker = Bm25Ranker(ctx, query, derivations, strategy=strategy, **options)
        else:
            self.ranker = TieredRanker(ctx, query, derivations, strategy=strategy, **options)
        self.rules: list[Rule] = self.ranker.rules

    def universe(self) -> BitMap:
        return self.ranker.universe()

    def rank(self, docs: BitMap, wanted: int) -> RankingOutcome:
        return self.ranker.rank(docs, wanted)

    def count(self, docs: BitMap, limit: int) -> int:
        return self.ranker.count(docs, limit)

    def kept(self, docs: BitMap) -> BitMap:
        return self.ranker.kept(docs)

    def dropped(self) -> BitMap:
        """After ``rank``: the documents of explored buckets the threshold dropped."""
        ranker = self.ranker
        return ranker.dropped if isinstance(ranker, Ranker) else ranker.dropped()
