"""Documents where words stand next to each other, found under a budget: split words and synonyms.

The postings say which documents hold a word in which field, not where, so adjacency is read from
token records, one document at a time. For a split word (``dont`` as ``don t``) or a multi-word synonym
that is extra recall, bounded per query. The bound counts what the check reads, the positions of the
phrase's words in the field checked (at least one per record), not how many documents hold the words:
a phrase of two common words (``a`` and ``train``) is checked as far as the budget goes and keeps the
documents found, instead of being dropped whole because its words meet in many documents.

Candidates are taken field by field, the most important field first (``searchableAttributes`` order,
then field id): only documents holding every word in that same field, so words far apart in different
fields cost nothing, and short fields such as titles, where a known item is typed from, come first.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyroaring import BitMap

from shard.index.postings import term_docs_by_field
from shard.query.context import SearchContext
from shard.query.record_view import RecordView


@dataclass
class Budget:
    """Positions a check may still read, over one or several phrases."""

    left: int

    @property
    def spent(self) -> bool:
        return self.left <= 0


def field_candidates(
    ctx: SearchContext, words: tuple[str | None, ...], fields: set[int] | None
) -> list[tuple[int, BitMap]]:
    """Per field (most important first) among ``fields`` (None = all), the documents holding every word
    of ``words`` in it; None entries stand for any word and select nothing."""
    present = {word for word in words if word is not None}
    per_word = [term_docs_by_field(ctx.txn, ctx.env.words, ctx.index_id, word) for word in present]
    if not per_word:
        return []
    shared = set(per_word[0]).intersection(*per_word[1:])
    if fields is not None:
        shared &= fields
    found = []
    for field_id in sorted(shared, key=lambda field_id: (ctx.weight(field_id), field_id)):
        docs = BitMap.intersection(*(by_field[field_id] for by_field in per_word))
        if docs:
            found.append((field_id, docs))
    return found


def adjacent_docs(
    ctx: SearchContext, words: tuple[str | None, ...], fields: set[int] | None, budget: Budget
) -> BitMap:
    """Documents having ``words`` consecutively in one of ``fields`` (None = any word between), as many
    as ``budget`` lets the check find: it stops when the budget is spent, keeping what it found."""
    found = BitMap()
    if len(words) < 2 or budget.spent:
        return found
    for field_id, docs in field_candidates(ctx, words, fields):
        for doc_id in docs - found if found else docs:
            adjacent, cost = _adjacent_in(ctx.record(doc_id), words, field_id)
            if adjacent:
                found.add(doc_id)
            budget.left -= cost
            if budget.spent:
                return found
    return found


def _adjacent_in(record: RecordView, words: tuple[str | None, ...], field_id: int) -> tuple[bool, int]:
    """Whether ``words`` stand consecutively in the record's field ``field_id``, and the positions read
    to tell (at least 1); the first place that fits ends the check."""
    present = [(offset, word) for offset, word in enumerate(words) if word is not None]
    places = record.places(word for _, word in present)
    (first_offset, first), others = present[0], present[1:]
    starts = [position for field, position in places[first] if field == field_id]
    spots = [
        (offset - first_offset, {position for field, position in places[word] if field == field_id})
        for offset, word in others
    ]
    cost = max(1, len(starts) + sum(len(positions) for _, positions in spots))
    return any(all(start + gap in positions for gap, positions in spots) for start in starts), cost
