"""Split words (search.md §7.1): which two adjacent document words a query word may stand for.

As on the reference engine, a word of two letters or more is cut where the two halves are most often
adjacent (in that order, in one field) over the documents, the earliest cut on a tie: ``about`` is
``abo ut`` where that pair is more frequent than ``ab out``, however common ``ab`` and ``out`` are
apart, and ``its`` is ``it s`` (``it's``). Adjacency is read from token records, so the count runs
only when two cuts or more have both halves in the vocabulary (one candidate is simply kept: if its
halves are never adjacent, its phrase matches nothing, as no split would).
"""

from __future__ import annotations

from itertools import islice

from pyroaring import BitMap

from shard.query.context import SearchContext

SPLIT_COUNT_BUDGET = 1_000
"""Records read to count one cut's adjacent pairs, over the whole index (each shard takes its share);
past it the count is extrapolated from the first documents checked."""


def best_split(ctx: SearchContext, word: str) -> tuple[str, str] | None:
    candidates: list[tuple[str, str, BitMap]] = []
    for cut in range(1, len(word)):
        left, right = word[:cut], word[cut:]
        left_docs = ctx.word_docs(left, None)
        if not left_docs:
            continue
        both = left_docs & ctx.word_docs(right, None)
        if both:
            candidates.append((left, right, both))
    if len(candidates) < 2:
        return None if not candidates else candidates[0][:2]
    best, best_count = None, 0.0
    for left, right, both in candidates:
        count = _adjacent_count(ctx, left, right, both)
        if count > best_count:
            best, best_count = (left, right), count
    return best


def _adjacent_count(ctx: SearchContext, left: str, right: str, docs: BitMap) -> float:
    """Documents of ``docs`` where ``right`` follows ``left`` in one field (extrapolated past the budget)."""
    limit = ctx.share(SPLIT_COUNT_BUDGET)
    checked = found = 0
    for doc_id in islice(docs, limit):
        places = ctx.record(doc_id).places((left, right))
        following = set(places[right])
        checked += 1
        found += any((field_id, position + 1) in following for field_id, position in places[left])
    return found * len(docs) / checked if checked else 0.0
