"""Document sets of derivations: which documents each term matches, per typo cost.

Everything the bucket sort does on whole sets (matching strategy, words and typo rules) is bitmap
algebra over these; only phrases need the token records, to check that their words are adjacent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyroaring import BitMap

from shard.index.postings import prefix_docs, term_docs
from shard.index.prefixes import is_short
from shard.index.read_cache import PHRASE_DOCS, PREFIX_WORDS
from shard.query.adjacency import Budget, adjacent_docs
from shard.query.context import SearchContext
from shard.query.derivations import STEM_COST, Derivations
from shard.query.occurrences import phrase_starts

PHRASE_CHECK_BUDGET = 4_000
"""Positions of a split word's or multi-word synonym's words (at least one per record) its check may read,
over the whole index (each shard takes its share, ``SearchContext.share``): past it, the documents not
yet checked are given up, those found are kept (``adjacency.py``)."""


@dataclass
class DocSets:
    """One derivation's documents by typo cost (exact cost levels, not cumulative)."""

    derivations: Derivations
    by_cost: dict[int, BitMap] = field(default_factory=dict)
    _all: BitMap | None = field(default=None, repr=False)

    def all(self) -> BitMap:
        """Every document the derivation matches, once resolved: computed once, not to be changed
        (matching takes it for every kept set)."""
        if self._all is None:
            self._all = BitMap.union(*self.by_cost.values()) if self.by_cost else BitMap()
        return self._all


def resolve(ctx: SearchContext, derivations: Derivations, base: DocSets | None = None) -> DocSets:
    """``base``: the same derivation's sets without its stem, resolved already (the first tier's):
    only the stem's documents are then looked up and added to them."""
    if base is not None:
        if derivations.stem is None:
            return base
        sets = DocSets(derivations, dict(base.by_cost))
        _add(sets, STEM_COST, _stem_docs(ctx, derivations.stem))
        return _cheapest(sets)
    sets = DocSets(derivations)
    typo_only = typo_fields(ctx)
    for word, match in derivations.words.items():
        _add(sets, match.cost, _word_docs(ctx, word, typo_only if match.typos else ctx.allowed_fields))
    if derivations.prefix is not None:
        _add(sets, derivations.prefix_cost, _prefix_docs(ctx, derivations))
    if derivations.stem is not None:
        _add(sets, STEM_COST, _stem_docs(ctx, derivations.stem))
    for words, match in derivations.phrases:
        fields = typo_only if match.typos else ctx.allowed_fields
        # Split words and synonyms are extra recall, checked as far as the budget goes; a quoted
        # phrase is what the user asked for, checked in every document.
        _add(sets, match.cost, _cached_phrase_docs(ctx, words, fields, bounded=not match.exact))
    return _cheapest(sets)


def _add(sets: DocSets, cost: int, docs: BitMap) -> None:
    """Never in place: the sets of a stemless derivation are shared with its stemmed twin."""
    if docs:
        current = sets.by_cost.get(cost)
        sets.by_cost[cost] = docs if current is None else current | docs


def _cheapest(sets: DocSets) -> DocSets:
    """A document matched at several costs counts at its cheapest."""
    seen = BitMap()
    by_cost: dict[int, BitMap] = {}
    for cost in sorted(sets.by_cost):
        docs = sets.by_cost[cost] - seen
        if docs:
            by_cost[cost] = docs
            seen |= docs
    sets.by_cost = by_cost
    return sets


def _stem_docs(ctx: SearchContext, stem: str) -> BitMap:
    docs = _word_docs(ctx, stem, ctx.allowed_fields)
    docs |= term_docs(ctx.txn, ctx.env.stems, ctx.index_id, stem, ctx.allowed_fields)
    return docs


def typo_fields(ctx: SearchContext) -> set[int] | None:
    """Fields typo derivations may match in: the allowed ones minus ``disableOnAttributes``."""
    if not ctx.exact_fields:
        return ctx.allowed_fields
    everything = set(range(len(ctx.state.field_names)))
    allowed = everything if ctx.allowed_fields is None else ctx.allowed_fields
    return allowed - ctx.exact_fields


def _word_docs(ctx: SearchContext, word: str, fields: set[int] | None) -> BitMap:
    if fields is not None and not fields:
        return BitMap()
    return ctx.word_docs(word, fields)


def _prefix_docs(ctx: SearchContext, derivations: Derivations) -> BitMap:
    """Short prefixes come precomputed; longer ones are the union of the words they expand to, all of
    them (one pass over the prefix's keys) when they are more than listed: a shard lists at most
    ``PREFIX_LIMIT``, and how many a shard holds depends on the shard count."""
    prefix = derivations.prefix or ""
    if is_short(prefix):
        return term_docs(ctx.txn, ctx.env.prefixes, ctx.index_id, prefix, ctx.allowed_fields)
    if not derivations.prefix_complete:
        fields = None if ctx.allowed_fields is None else frozenset(ctx.allowed_fields)
        docs: BitMap = ctx.cached(
            (PREFIX_WORDS, ctx.index_id, (prefix, fields)),
            lambda: prefix_docs(ctx.txn, ctx.env.words, ctx.index_id, prefix, ctx.allowed_fields),
            lambda found: 128 + 4 * len(found),
        )
        return BitMap(docs)
    sets = [_word_docs(ctx, word, ctx.allowed_fields) for word in derivations.prefix_words]
    return BitMap.union(*sets) if sets else BitMap()


def word_docs(ctx: SearchContext, word: str) -> BitMap:
    return _word_docs(ctx, word, ctx.allowed_fields)


def _cached_phrase_docs(
    ctx: SearchContext, words: tuple[str | None, ...], fields: set[int] | None, bounded: bool
) -> BitMap:
    """The phrase's documents (``bounded``: under ``PHRASE_CHECK_BUDGET``) kept until the next batch:
    a split word (any word of two letters or more) is checked in up to hundreds of records, again at
    every keystroke of a query being typed. A copy: ``resolve`` updates its sets in place."""
    key = (words, None if fields is None else frozenset(fields), bounded)

    def check() -> BitMap:
        if bounded:
            return adjacent_docs(ctx, words, fields, Budget(ctx.share(PHRASE_CHECK_BUDGET)))
        return phrase_docs(ctx, words, fields)

    docs: BitMap = ctx.cached((PHRASE_DOCS, ctx.index_id, key), check, lambda found: 128 + 4 * len(found))
    return BitMap(docs)


def phrase_docs(ctx: SearchContext, words: tuple[str | None, ...], fields: set[int] | None) -> BitMap:
    """Documents having the words consecutively in one field (None = any word in between), every
    candidate's record checked."""
    present = [word for word in words if word is not None]
    if not present:
        return BitMap()
    sets = sorted((_word_docs(ctx, word, fields) for word in set(present)), key=len)
    docs = BitMap.intersection(*sets) if len(sets) > 1 else sets[0]
    if len(words) == 1:
        return docs
    return BitMap(
        doc_id
        for doc_id in docs
        if any(
            fields is None or field_id in fields for field_id, _ in phrase_starts(ctx.record(doc_id), words)
        )
    )
