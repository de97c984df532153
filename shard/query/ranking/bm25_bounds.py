"""Per-document upper bounds of the ``bm25`` score, from postings and the impacts table alone.

``bm25_rule.py`` scores documents from their token records in decreasing bound order and stops once no
unscored bound beats the best score found, so the tighter the bound, the fewer records a search reads.
A term's BM25F frequency in a document is the sum, over the places its words stand, of the match's
weight times the norm of the field's ``searchableAttributes`` rank. Every word the term matches through
is listed (its own, typo variants, a prefix's words, the stem's words: what ``DocMatcher`` looks for),
and for each the impacts table says how many times at most it stands in each field (``impacts.py``) and
how long at least each field is; the bound adds them up as if no two matches shared a place. An n-gram's
words count for each term they join. Only a prefix standing for too many words to read leaves its
documents at the term's saturated weight, the only bound postings gave before. A phrase (split word,
synonym, quoted phrase) counts where its first word stands, in the documents its check found (as
the saturated bound did, a document the check did not reach is not credited with it).
"""

from __future__ import annotations

import numpy as np
from pyroaring import BitMap

from shard.index.impacts import field_lengths, word_frequencies
from shard.index.postings import term_docs_by_field
from shard.index.read_cache import FIELD_LENGTHS
from shard.query.context import SearchContext
from shard.query.derivations import STEM_COST, Derivations, WordMatch
from shard.query.ranking.bm25 import (
    K1,
    PREFIX_WEIGHT,
    STEM_WEIGHT,
    TYPO_WEIGHT,
    B,
    Bm25Scorer,
    Floats,
    ids_of,
    match_weight,
)

_INEXACT_ESTIMATE = max(STEM_WEIGHT, PREFIX_WEIGHT, TYPO_WEIGHT)
"""An inexact match's weight in the estimate."""
LISTED_WORDS_LIMIT = 64
"""Words of one derivation read for a bound; a prefix standing for more leaves its documents
saturated (reading a thousand words' frequencies would cost more than the records they spare)."""
_SLACK = 1 + 1e-9
"""The bound and the score add the same terms in another order: floating point must not put the
bound a hair under the score."""


def upper_bounds(scorer: Bm25Scorer) -> Floats:
    """Per internal id: an upper bound of the score."""
    ctx = scorer.ctx
    size = (ctx.state.live.max() + 1) if ctx.state.live else 0
    terms = len(scorer.idf)
    frequencies = [np.zeros(size) for _ in range(terms)]
    saturated = [BitMap() for _ in range(terms)]
    norms = _Norms(scorer, size)
    for number, derivation in enumerate(scorer.derivations):
        sets = scorer.coverage.sets(number)
        span = range(derivation.first, derivation.last + 1)
        listed = _listed(derivation)
        if listed is None:
            for term in span:
                saturated[term] |= sets.all()
            continue
        # An n-gram's word stands for every term it joins.
        found = frequencies[derivation.first] if len(span) == 1 else np.zeros(size)
        for word, match in listed.items():
            _add_word(ctx, norms, found, word, match_weight(match))
        for words, match in derivation.phrases:
            # A phrase stands where its first word does, in the documents its check found.
            lead = next(word for word in words if word is not None)
            _add_word(ctx, norms, found, lead, match_weight(match), sets.all())
        if len(span) > 1:
            for term in span:
                frequencies[term] += found
    upper = np.zeros(size)
    present = []
    for term, weight in enumerate(scorer.idf):
        frequency = frequencies[term]
        term_upper = weight * (K1 + 1) * frequency / (K1 + frequency)
        term_upper[ids_of(saturated[term])] = weight * (K1 + 1)
        present.append(term_upper > 0)
        upper += term_upper
    for first, second, bonus in scorer.pairs:
        upper += (present[first] & present[second]) * bonus
    return upper * _SLACK


def estimates(scorer: Bm25Scorer) -> Floats:
    """Per internal id: an estimate of the score (each term once, at the average length, in a field
    of the first rank) that ranks the documents a budget leaves unscored; only then computed."""
    size = (scorer.ctx.state.live.max() + 1) if scorer.ctx.state.live else 0
    estimate = np.zeros(size)
    for term, weight in enumerate(scorer.idf):
        estimate += _estimate(scorer, term, weight, size)
    return estimate


def _estimate(scorer: Bm25Scorer, term: int, weight: float, size: int) -> Floats:
    """The term's part of the estimate: its best match once, in a first-rank field of average length."""
    best = np.zeros(size)
    for number, derivation in enumerate(scorer.derivations):
        if derivation.first <= term <= derivation.last:
            for cost, docs in scorer.coverage.sets(number).by_cost.items():
                ids = ids_of(docs)
                value = 1.0 if cost == 0 and derivation.first == derivation.last else _INEXACT_ESTIMATE
                best[ids] = np.maximum(best[ids], value)  # a bitmap's ids are distinct
    part: Floats = weight * best * (K1 + 1) / (K1 + best + (best == 0))
    return part


def _listed(derivation: Derivations) -> dict[str, WordMatch] | None:
    """The words the derivation matches through and how (as ``DocMatcher`` lists them); None when
    it matches what no list of words holds (a prefix standing for more words than listed), or too many
    words to read."""
    if derivation.prefix is not None and not derivation.prefix_complete:
        return None
    listed: dict[str, WordMatch] = dict.fromkeys(derivation.stem_words, WordMatch(STEM_COST, 0, False))
    if derivation.prefix is not None:
        listed.update(dict.fromkeys(derivation.prefix_words, WordMatch(derivation.prefix_cost, 0, False)))
    listed.update(derivation.words)
    return listed if len(listed) <= LISTED_WORDS_LIMIT else None


def _add_word(
    ctx: SearchContext,
    norms: _Norms,
    frequency: Floats,
    word: str,
    weight: float,
    within: BitMap | None = None,
) -> None:
    """Adds the word's weighted occurrences bound, field by field, to ``frequency`` (only in the
    documents ``within``, when given)."""
    by_field = term_docs_by_field(ctx.txn, ctx.env.words, ctx.index_id, word)
    if not by_field:
        return
    repeated = word_frequencies(ctx.txn, ctx.env.impacts, ctx.index_id, word)
    for field_id, docs in by_field.items():
        rank = norms.rank(field_id)
        if rank is None:
            continue
        ids = ids_of(docs if within is None else docs & within)
        frequency[ids] += weight * norms.at(rank, ids)
        for most, more in repeated.get(field_id, ()):
            ids = ids_of(more if within is None else more & within)
            frequency[ids] += weight * (most - 1) * norms.at(rank, ids)


class _Norms:
    """Each ``searchableAttributes`` rank's length norm at its bound: the rank's words in a document
    are at least the sum of its allowed fields' length classes."""

    def __init__(self, scorer: Bm25Scorer, size: int) -> None:
        ctx = self.ctx = scorer.ctx
        ranks = len(scorer.average)
        allowed = ctx.allowed_fields
        self.ranks: dict[int, int] = {
            field_id: min(ctx.weight(field_id), ranks - 1)
            for field_id in range(len(ctx.state.field_names))
            if allowed is None or field_id in allowed
        }
        key = (FIELD_LENGTHS, ctx.index_id, (size, tuple(sorted(self.ranks.items())), ranks))
        self.shortest = ctx.cached(key, lambda: self._shortest(size, ranks), lambda found: size * 8 * ranks)
        self.weights = scorer.rank_weights
        self.average = scorer.average

    def rank(self, field_id: int) -> int | None:
        return self.ranks.get(field_id)

    def at(self, rank: int, ids: np.ndarray) -> Floats:
        """The norm's bound for documents ``ids``."""
        shortest = self.shortest[rank][ids]
        norm: Floats = self.weights[rank] / (1 - B + B * shortest / self.average[rank])
        return norm

    def _shortest(self, size: int, ranks: int) -> list[np.ndarray]:
        """Per rank, a lower bound of each document's words in the rank's allowed fields."""
        ctx = self.ctx
        shortest = [np.zeros(size) for _ in range(ranks)]
        for field_id, rank in self.ranks.items():
            for least, docs in field_lengths(ctx.txn, ctx.env.impacts, ctx.index_id, field_id):
                shortest[rank][ids_of(docs)] += least
        return shortest
