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
synonym, quoted phrase) counts where its first word stands, in the documents holding all its words
(not only those its check found, which the check's budget may cut: a record scored may hold it).

The bounds are computed for the documents asked only (``Bounds.of``): ``bm25_order.py`` asks for those
holding the rarest terms first, since the others are bounded by the other terms' largest parts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

from shard.index.impacts import field_lengths, word_frequencies
from shard.index.postings import term_docs_by_field
from shard.index.read_cache import FIELD_LENGTHS
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
IdArray = npt.NDArray[np.uint32]


class Bounds:
    """One query's per-document bounds, computed for the documents asked only (``of``), and for each
    term the documents whose bound it may add to (``term_docs``) with its largest possible part
    (``maxima``): a document outside a term's documents is bounded without reading its postings."""

    def __init__(self, scorer: Bm25Scorer) -> None:
        self.scorer = scorer
        ctx = scorer.ctx
        self.size = (ctx.state.live.max() + 1) if ctx.state.live else 0
        self.norms = _Norms(scorer, self.size)
        self.maxima = [weight * (K1 + 1) for weight in scorer.idf]
        """Per term, its part of any bound: BM25 saturates below ``idf * (K1 + 1)``."""
        self._postings: dict[str, list[_Field]] = {}
        self._term_docs: dict[int, BitMap] = {}
        self._known = BitMap()
        self._values = np.zeros(self.size)

    def term_docs(self, term: int) -> BitMap:
        """Every document whose bound ``term`` adds to: those its derivations match, and those
        holding a word they list in a ranked field."""
        found = self._term_docs.get(term)
        if found is None:
            scorer = self.scorer
            found = self._term_docs[term] = BitMap()
            for number, derivation in enumerate(scorer.derivations):
                if not derivation.first <= term <= derivation.last:
                    continue
                found |= scorer.coverage.sets(number).all()
                listed = _listed(derivation)
                if listed is not None:
                    phrases = (self._holding(words) for words, _ in derivation.phrases)
                    found |= BitMap.union(BitMap(), *(self._anywhere(word) for word in listed), *phrases)
        return found

    def of(self, within: BitMap) -> Floats:
        """The bounds of ``within``'s documents, in id order (each computed once per query)."""
        if not self._known:
            computed = self._compute(within)
            self._values[ids_of(within)] = computed
            self._known = BitMap(within)
            return computed
        missing = within - self._known
        if missing:
            self._values[ids_of(missing)] = self._compute(missing)
            self._known |= missing
        found: Floats = self._values[ids_of(within)]
        return found

    def _compute(self, within: BitMap) -> Floats:
        """The bounds of ``within``'s documents, in id order: per document, the same sums in the same
        order whatever other documents are computed with it."""
        scorer = self.scorer
        ids = ids_of(within)
        slots = _Slots(ids, self.size)
        terms = len(scorer.idf)
        frequencies = [np.zeros(slots.length) for _ in range(terms)]
        saturated = [BitMap() for _ in range(terms)]
        for number, derivation in enumerate(scorer.derivations):
            sets = scorer.coverage.sets(number)
            span = range(derivation.first, derivation.last + 1)
            listed = _listed(derivation)
            if listed is None:
                for term in span:
                    saturated[term] |= sets.all() & within
                continue
            # An n-gram's word stands for every term it joins.
            found = frequencies[derivation.first] if len(span) == 1 else np.zeros(slots.length)
            for word, match in listed.items():
                self._add_word(slots, found, word, match_weight(match), within)
            for words, match in derivation.phrases:
                # A phrase stands where its first word does, in the documents holding all its words.
                lead = next(word for word in words if word is not None)
                self._add_word(slots, found, lead, match_weight(match), self._holding(words) & within)
            if len(span) > 1:
                for term in span:
                    frequencies[term] += found
        upper = np.zeros(len(ids))
        present = []
        for term, weight in enumerate(scorer.idf):
            frequency = slots.values(frequencies[term])
            term_upper = weight * (K1 + 1) * frequency / (K1 + frequency)
            if saturated[term]:
                term_upper[_positions(ids, saturated[term])] = weight * (K1 + 1)
            present.append(term_upper > 0)
            upper += term_upper
        for first, second, bonus in scorer.pairs:
            upper += (present[first] & present[second]) * bonus
        bounds: Floats = upper * _SLACK
        return bounds

    def _word(self, word: str) -> list[_Field]:
        """The word's documents per ranked field, with their frequency classes (read once per query)."""
        fields = self._postings.get(word)
        if fields is None:
            ctx = self.scorer.ctx
            fields = self._postings[word] = []
            by_field = term_docs_by_field(ctx.txn, ctx.env.words, ctx.index_id, word)
            if by_field:
                repeated = word_frequencies(ctx.txn, ctx.env.impacts, ctx.index_id, word)
                for field_id, docs in by_field.items():
                    rank = self.norms.rank(field_id)
                    if rank is not None:
                        fields.append(_Field(rank, docs, repeated.get(field_id, [])))
        return fields

    def _holding(self, words: tuple[str | None, ...]) -> BitMap:
        """The documents holding every word of a phrase (in ranked fields): wherever it may stand,
        checked or not."""
        each = [self._anywhere(word) for word in words if word is not None]
        return BitMap.intersection(*each) if len(each) > 1 else each[0]

    def _anywhere(self, word: str) -> BitMap:
        """The documents holding ``word`` in a ranked field."""
        return BitMap.union(BitMap(), *(entry.docs for entry in self._word(word)))

    def _add_word(self, slots: _Slots, frequency: Floats, word: str, weight: float, within: BitMap) -> None:
        """Adds the word's weighted occurrences bound, field by field, to ``frequency`` (in ``slots``,
        the documents ``within``)."""
        norms = self.norms
        for entry in self._word(word):
            docs = entry.docs & within
            if docs:
                ids = ids_of(docs)
                frequency[slots.of(ids)] += weight * norms.at(entry.rank, ids)
            for most, more in entry.repeated:
                docs = more & within
                if docs:
                    ids = ids_of(docs)
                    frequency[slots.of(ids)] += weight * (most - 1) * norms.at(entry.rank, ids)


@dataclass(frozen=True)
class _Field:
    """A word's documents in one field, of its ``searchableAttributes`` rank, and those holding it
    several times by frequency class (at most this many occurrences, documents)."""

    rank: int
    docs: BitMap
    repeated: list[tuple[int, BitMap]]


class _Slots:
    """Where the documents being bounded keep their sums: at their ids in arrays as long as the
    shard's ids when they are many (no lookup), packed in id order when few (a binary search each)."""

    def __init__(self, ids: IdArray, size: int) -> None:
        self.ids = ids
        self.dense = len(ids) * 8 > size
        self.length = size if self.dense else len(ids)

    def of(self, ids: IdArray) -> npt.NDArray[np.intp] | IdArray:
        """The slots of ``ids``, a subset of the documents."""
        return ids if self.dense else np.searchsorted(self.ids, ids)

    def values(self, sums: Floats) -> Floats:
        """``sums`` in the documents' id order."""
        found: Floats = sums[self.ids] if self.dense else sums
        return found


def _positions(ids: IdArray, docs: BitMap) -> npt.NDArray[np.intp]:
    """Where ``docs`` (a subset of ``ids``, both ascending) stand in ``ids``."""
    positions: npt.NDArray[np.intp] = np.searchsorted(ids, ids_of(docs))
    return positions


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
        fields = (size, tuple(sorted(self.ranks.items())), ranks)
        shortest = ctx.cached(
            (FIELD_LENGTHS, ctx.index_id, fields),
            lambda: self._shortest(size, ranks),
            lambda found: size * 8 * ranks,
        )
        # The averages are the index's, the same from one query to the next until a batch.
        weights, average = scorer.rank_weights, scorer.average
        self.norms: list[Floats] = ctx.cached(
            (FIELD_LENGTHS, ctx.index_id, (fields, tuple(weights), tuple(average))),
            lambda: [weights[rank] / (1 - B + B * shortest[rank] / average[rank]) for rank in range(ranks)],
            lambda found: size * 8 * ranks,
        )

    def rank(self, field_id: int) -> int | None:
        return self.ranks.get(field_id)

    def at(self, rank: int, ids: np.ndarray) -> Floats:
        """The norm's bound for documents ``ids``."""
        norm: Floats = self.norms[rank][ids]
        return norm

    def _shortest(self, size: int, ranks: int) -> list[np.ndarray]:
        """Per rank, a lower bound of each document's words in the rank's allowed fields."""
        ctx = self.ctx
        shortest = [np.zeros(size) for _ in range(ranks)]
        for field_id, rank in self.ranks.items():
            for least, docs in field_lengths(ctx.txn, ctx.env.impacts, ctx.index_id, field_id):
                shortest[rank][ids_of(docs)] += least
        return shortest
