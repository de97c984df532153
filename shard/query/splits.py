"""Split words (search.md §7.1): which two adjacent document words a query word may stand for.

As on the reference engine, a word of two letters or more is cut where the two halves are most often
adjacent (in that order, in one field) over the documents, the earliest cut on a tie: ``about`` is
``abo ut`` where that pair is more frequent than ``ab out``, however common ``ab`` and ``out`` are
apart, and ``atrain`` is ``a train`` where ``a`` and ``train`` stand together in more documents than
``at`` and ``rain``, even if ``at`` and ``rain`` meet in more documents. Adjacency is read from token
records (``adjacency.py``), so the count runs only when two cuts or more have both halves in one
document (one candidate is simply kept: if its halves are never adjacent, its phrase matches nothing,
as no split would).

The counts share one budget of positions read. Cuts are counted from the one whose halves meet in the
fewest documents up, so the cheap ones are exact; a cut whose halves meet in fewer documents than the
best count so far cannot beat it and is not read at all. A count the budget cut short is a lower
bound, compared as it is.
"""

from __future__ import annotations

from shard.query.adjacency import Budget, adjacent_docs
from shard.query.context import SearchContext

SPLIT_COUNT_BUDGET = 4_000
"""Positions read (at least one per record) to count the adjacent pairs of all of one word's cuts,
over the whole index (each shard takes its share)."""


def best_split(ctx: SearchContext, word: str) -> tuple[str, str] | None:
    candidates: list[tuple[int, int, str, str]] = []
    for cut in range(1, len(word)):
        left, right = word[:cut], word[cut:]
        left_docs = ctx.word_docs(left, None)
        if not left_docs:
            continue
        together = left_docs.intersection_cardinality(ctx.word_docs(right, None))
        if together:
            candidates.append((together, cut, left, right))
    if len(candidates) < 2:
        return None if not candidates else candidates[0][2:]
    budget = Budget(ctx.share(SPLIT_COUNT_BUDGET))
    best: tuple[int, int] | None = None  # (adjacent documents, cut)
    for together, cut, left, right in sorted(candidates):
        if best is not None and (together, -cut) <= (best[0], -best[1]):
            continue  # adjacent in at most ``together`` documents: cannot beat the best count
        count = len(adjacent_docs(ctx, (left, right), None, budget))
        if best is None or (count, -cut) > (best[0], -best[1]):
            best = (count, cut)
    if best is None or best[0] == 0:
        return None
    return word[: best[1]], word[best[1] :]
