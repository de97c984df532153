"""The ``bm25`` candidates in decreasing order of their score bound, computing as few bounds as it can.

``bm25_rule.py`` scores documents in this order (ties in id order) and stops once no unscored bound beats
the best score found, or its record budget is spent. Computing every candidate's bound reads every query
term's postings in full: for a query with a common word, hundreds of thousands of documents, most of which
are never scored. As in MaxScore, terms are taken rarest first (highest ``idf``, the largest part a term
can add): a document holding none of the terms taken so far is bounded by the sum of the other terms'
largest parts (``Bounds.maxima``) plus their proximity bonuses, so only the documents holding a taken
term need their own bound, until the order reaches that sum; then the next term is taken. The order is
the one every candidate's bound would give, so the scores, the documents the budget lets be scored and
the hits are the same.
"""

from __future__ import annotations

import math

import numpy as np
from pyroaring import BitMap

from shard.query.ranking.bm25 import Floats, ids_of
from shard.query.ranking.bm25_bounds import _SLACK, Bounds, IdArray

FIRST_CHUNK = 256
"""Candidates put in bound order first; each next chunk is 8 times larger (sorting a common word's
hundred thousand candidates cost more than scoring the few hundred a page needs)."""
_EMPTY_IDS = np.zeros(0, dtype=np.uint32)


class BoundOrder:
    """``docs`` in decreasing bound order, ties in id order, a chunk at a time (``next_chunk``)."""

    def __init__(self, bounds: Bounds, docs: BitMap) -> None:
        self.bounds = bounds
        scorer = bounds.scorer
        self._terms = sorted(range(len(scorer.idf)), key=lambda term: (-bounds.maxima[term], term))
        self._taken: set[int] = set()
        self.unbounded = docs
        """Candidates whose bound is not computed yet: each at most ``ceiling``."""
        self.ceiling = self._ceiling()
        self._ids: IdArray = _EMPTY_IDS
        self._values: Floats = np.zeros(0)
        self._size = FIRST_CHUNK

    def drop_unreachable(self, threshold: float, half: float) -> BitMap:
        """Leaves out the candidates whose normalised bound ``bound / (bound + half)`` is under
        ``threshold`` and returns them; computes bounds until the unbounded candidates' ceiling is
        under it, so those go without one."""
        while self.unbounded and self.ceiling / (self.ceiling + half) >= threshold:
            self._take()
        dropped = self.unbounded
        self.unbounded = BitMap()
        self.ceiling = -math.inf
        low = ~(self._values / (self._values + half) >= threshold)
        dropped |= BitMap(self._ids[low].tolist())
        self._ids, self._values = self._ids[~low], self._values[~low]
        return dropped

    def next_chunk(self) -> tuple[list[int], list[float]]:
        """The next candidates and their bounds, highest first; empty once all were given."""
        while True:
            eligible = self._values > self.ceiling
            count = int(np.count_nonzero(eligible))
            if count == 0 and self.unbounded:
                self._take()
                continue
            if count == 0:
                return [], []
            if count > self._size:
                chosen = self._values[eligible]
                least = np.partition(chosen, count - self._size)[count - self._size]
                eligible &= self._values >= least
            chunk, values = self._ids[eligible], self._values[eligible]
            self._ids, self._values = self._ids[~eligible], self._values[~eligible]
            self._size *= 8
            order = np.lexsort((chunk, -values))
            return chunk[order].tolist(), values[order].tolist()

    def remaining(self) -> IdArray:
        """The candidates not given yet."""
        if not self.unbounded:
            return self._ids
        return np.concatenate((self._ids, ids_of(self.unbounded)))

    def _take(self) -> None:
        """Computes the bounds of the unbounded candidates holding the next term (all of them from
        the last term on: those holding no term have a bound too, nothing)."""
        untaken = [term for term in self._terms if term not in self._taken]
        self._taken.update(untaken[:1])
        last = len(untaken) <= 1
        docs = self.unbounded if last else self.unbounded & self.bounds.term_docs(untaken[0])
        self.unbounded = self.unbounded - docs
        self.ceiling = self._ceiling()
        if docs:
            self._ids = np.concatenate((self._ids, ids_of(docs)))
            self._values = np.concatenate((self._values, self.bounds.of(docs)))

    def _ceiling(self) -> float:
        """The highest bound a candidate holding none of the taken terms may have; -inf when every
        candidate has its own bound."""
        if not self.unbounded:
            return -math.inf
        scorer = self.bounds.scorer
        left = [term not in self._taken for term in range(len(scorer.idf))]
        total = sum(self.bounds.maxima[term] for term in range(len(left)) if left[term])
        total += sum(bonus for first, second, bonus in scorer.pairs if left[first] and left[second])
        # Twice the slack: the bound's own, and the saturated part's rounding.
        return total * _SLACK * _SLACK
