"""The ``bm25`` matching strategy's score (a Sift extension): BM25F over the query's derivations.

Any query term qualifies a document. Each term weighs by its inverse document frequency; its
occurrences count by where they are (fields grouped by their ``searchableAttributes`` rank, each rank
a BM25F "field" with its own weight and length normalisation) and by how they match (the query's own
word counts 1, a stem, split word or n-gram, a prefix and a typo less); consecutive query terms
standing close together in a field add a bonus. Document frequencies, the document count and each
rank's words are index-wide (the gateway sums the shards' ``Bm25Stats`` before the search), so every
shard computes the same score for the same document, and ``normalised`` maps it to 0..1 the same way
everywhere.

Ranking reads the records of few documents: an upper bound of every candidate's score comes from
the terms' postings and their frequency and field length classes (``bm25_bounds.py``, numpy over the
bitmaps), and documents are scored from their records in decreasing bound order until the best
unscored bound cannot beat the best scored document (``bm25_rule.py``).

The constants were chosen on Cranfield (2 shards, nDCG@10 / Recall@100 of 225 queries, each varied
alone from K1 1.2, B 0.75, rank decay 0.5, stem 0.6, typo 0.3, proximity 0.1: 0.3920 / 0.7565):
rank decay 1.0 0.3835, 0.3 0.3932; proximity 0 0.3900, 0.3 0.3974; stem 1.0 0.3936, 0.3 0.3878; typo
0.1 0.3913; K1 0.9 with B 0.4 0.3929; then stem 0.8 with proximity 0.3 0.3980 / 0.7586 (kept), with
proximity 0.5 0.3967.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

from shard.query.context import SearchContext
from shard.query.derivations import Derivations, WordMatch
from shard.query.occurrences import DocMatcher
from shard.query.parse import ParsedQuery
from shard.query.ranking.coverage import Coverage

K1 = 1.2
"""Term-frequency saturation."""
B = 0.75
"""Length normalisation: 0 ignores field lengths, 1 divides by them relative to the average."""
RANK_DECAY = 0.5
"""The weight of a field of ``searchableAttributes`` rank r is ``RANK_DECAY ** r`` (title before text)."""
STEM_WEIGHT = 0.8
"""An occurrence matching through a stem, a split or an n-gram, relative to the query's own word."""
PREFIX_WEIGHT = 0.5
"""An occurrence of a longer word the last term prefixes."""
TYPO_WEIGHT = 0.3
"""An occurrence with one typo (squared for two)."""
PROXIMITY = 0.3
"""Consecutive query terms at distance d in one field add ``PROXIMITY * min(idf) / d``."""
HALF_SCORE = 1.0
"""The raw score normalised to 0.5, in mean idfs of the query's terms that match some document: a
document holding one such term once, in a first-rank field of average length, scores about 0.5, three
about 0.75, whatever the query's length (a search's hybrid fusion compares these with similarities;
the query's maximum, the first choice, put a 15-word query's best hits under 0.1, so that any
semantic hit passed them)."""

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Bm25Stats:
    """Index-wide statistics: each term's document frequency, the number of documents, and the words
    the fields of each ``searchableAttributes`` rank hold in all of them."""

    frequencies: tuple[int, ...]
    documents: int
    rank_words: tuple[int, ...]

    def encode(self) -> list[int]:
        """The counts the gateway sums element-wise over shards (after the term counts' two lists)."""
        return [*self.frequencies, self.documents, *self.rank_words]

    @classmethod
    def decode(cls, counts: Sequence[int], terms: int, ranks: int) -> Bm25Stats | None:
        """``counts``: the summed term counts (exact, then with stems, ``stem_tier.count_terms``)
        followed by ``encode``'s; None when they do not have that shape."""
        if len(counts) != 2 * terms + 1 + ranks:
            return None
        tail = counts[2 * terms :]
        return cls(tuple(counts[terms : 2 * terms]), tail[0], tuple(tail[1:]))


def local_stats(ctx: SearchContext, frequencies: Sequence[int]) -> Bm25Stats:
    """This shard's statistics, given its terms' document frequencies."""
    return Bm25Stats(tuple(frequencies), len(ctx.state.live), tuple(rank_words(ctx)))


def rank_words(ctx: SearchContext) -> list[int]:
    """Words per ``searchableAttributes`` rank over the shard's live documents (allowed fields only)."""
    totals = [0] * (ctx.max_weight + 1)
    allowed = ctx.allowed_fields
    for field_id, words in enumerate(ctx.state.field_tokens):
        if allowed is None or field_id in allowed:
            totals[ctx.weight(field_id)] += words
    return totals


def idf(frequency: int, documents: int) -> float:
    """BM25's inverse document frequency, never negative."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def match_weight(match: WordMatch) -> float:
    if match.exact:
        return 1.0
    if match.typos:
        return float(TYPO_WEIGHT**match.typos)
    return PREFIX_WEIGHT if match.cost == 0 else STEM_WEIGHT


class Bm25Scorer:
    """One query's scores on one shard: bounds from postings, exact scores from records."""

    def __init__(
        self,
        ctx: SearchContext,
        query: ParsedQuery,
        derivations: list[Derivations],
        coverage: Coverage,
        stats: Bm25Stats,
    ) -> None:
        self.ctx = ctx
        self.derivations = derivations
        self.coverage = coverage
        terms = len(query.terms)
        self.idf = [idf(stats.frequencies[term], stats.documents) for term in range(terms)]
        self.average = [max(words / max(stats.documents, 1), 1.0) for words in stats.rank_words]
        self.rank_weights = [RANK_DECAY**rank for rank in range(len(stats.rank_words))]
        self.pairs = [
            (term, term + 1, PROXIMITY * min(self.idf[term], self.idf[term + 1])) for term in range(terms - 1)
        ]
        matched = [weight for term, weight in enumerate(self.idf) if stats.frequencies[term] > 0]
        self.half = HALF_SCORE * (sum(matched) / len(matched) if matched else 1.0)
        self.matcher = DocMatcher(derivations, ctx.allowed_fields, ctx.exact_fields)

    def normalised(self, raw: float) -> float:
        """``raw / (raw + half)``: in 0..1, in raw score order, the same on every shard."""
        return raw / (raw + self.half) if raw > 0 else 0.0

    def score(self, doc_id: int) -> float:
        """The document's BM25F score from its token record."""
        ctx = self.ctx
        record = ctx.record(doc_id)
        ranks = len(self.average)
        lengths = [0] * ranks
        allowed = ctx.allowed_fields
        field_rank: dict[int, int] = {}
        for entry in record.fields:
            if allowed is None or entry.field_id in allowed:
                rank = field_rank[entry.field_id] = min(ctx.weight(entry.field_id), ranks - 1)
                lengths[rank] += len(entry.words)
        norms = [
            weight / (1 - B + B * length / average)
            for weight, length, average in zip(self.rank_weights, lengths, self.average, strict=True)
        ]
        # (term, field, position) -> the best weight of a match there (a word may match several ways).
        best: dict[tuple[int, int, int], float] = {}
        for occurrence in self.matcher.occurrences(record):
            derivation = self.derivations[occurrence.derivation]
            weight = match_weight(occurrence.match)
            for term in range(derivation.first, derivation.last + 1):
                key = (term, occurrence.field_id, occurrence.start)
                if best.get(key, 0.0) < weight:
                    best[key] = weight
        frequencies = [0.0] * len(self.idf)
        places: dict[int, dict[int, list[int]]] = {}
        for (term, field_id, position), weight in best.items():
            found = field_rank.get(field_id)
            if found is None:
                continue
            frequencies[term] += weight * norms[found]
            places.setdefault(term, {}).setdefault(field_id, []).append(position)
        total = 0.0
        for term, frequency in enumerate(frequencies):
            if frequency:
                total += self.idf[term] * frequency * (K1 + 1) / (K1 + frequency)
        for first, second, bonus in self.pairs:
            distance = _closest(places.get(first), places.get(second))
            if distance is not None:
                total += bonus / distance
        return total


def _closest(first: dict[int, list[int]] | None, second: dict[int, list[int]] | None) -> int | None:
    """The smallest non-zero distance between a place of each in one field; None when none share one."""
    if not first or not second:
        return None
    closest: int | None = None
    for field_id, positions in first.items():
        others = second.get(field_id)
        if not others:
            continue
        others = sorted(others)
        for position in positions:
            index = bisect_left(others, position)
            for neighbour in others[max(index - 1, 0) : index + 2]:
                distance = abs(neighbour - position)
                # One word matching both terms is no pair.
                if distance and (closest is None or distance < closest):
                    closest = distance
    return closest


def ids_of(docs: BitMap) -> npt.NDArray[np.uint32]:
    return np.frombuffer(docs.to_array(), dtype=np.uint32) if docs else np.zeros(0, dtype=np.uint32)
