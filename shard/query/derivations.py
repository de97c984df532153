"""Every way a query term can match a document word (search.md §7.1, §7.3, §6.7).

A term matches its own word, typo variants of it, any word it prefixes (last term), words with the
same stem, and its synonyms; a word may also match split in two, and 2-3 consecutive terms may match
concatenated (n-grams). Vocabulary lookups happen here, once per query; what each derivation costs
for the typo rule and whether it counts as exact is decided here too, so docsets, per-document
matching and highlighting all agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from shard.analysis import MAX_WORD_BYTES, Analyzer, TokenKind
from shard.query.context import SearchContext
from shard.query.parse import ParsedQuery, QueryTerm
from shard.query.vocabulary import best_split, prefix_words, typo_words

MAX_NGRAM = 3
MIN_SPLIT_LENGTH = 4
"""Shorter words split only into letters and particles that are everywhere, never a real match."""
EXPANSION_LIMIT = 1000
STEM_COST = 1
"""A word sharing only the stem ranks with one-typo words, below the query's own word."""
_NUMBER_CHARS = frozenset("0123456789.,-+_/:")


@dataclass(frozen=True)
class WordMatch:
    cost: int
    """What the typo rule counts: typos, 1 for a split word, n (+ typos) for an n-gram."""
    typos: int
    """Actual edits: a typo derivation never matches in ``disableOnAttributes`` fields."""
    exact: bool
    """The query's own word: counted by the exactness rule."""


@dataclass
class Derivations:
    """The matches of terms ``first..last`` (one term, or an n-gram spanning several)."""

    first: int
    last: int
    words: dict[str, WordMatch] = field(default_factory=dict)
    prefix: str | None = None
    """Any word starting with this matches (cost ``prefix_cost``), besides the listed words."""
    prefix_cost: int = 0
    stem: str | None = None
    stem_language: str | None = None
    expansions: frozenset[str] | None = None
    """Every vocabulary word the prefix and the stem stand for, when few enough to list (per-document
    matching then intersects sets instead of testing each document word)."""
    phrases: list[tuple[tuple[str | None, ...], WordMatch]] = field(default_factory=list)
    """Consecutive words (None = any word): quoted phrases, multi-word synonyms, split words."""
    most_cost: int = 0
    """The highest typo cost the settings allow this derivation, whatever this shard's vocabulary
    holds: the typo rule's maximum must be the same on every shard for their scores to compare."""

    @property
    def span(self) -> int:
        return self.last - self.first + 1

    def max_cost(self) -> int:
        return self.most_cost


@dataclass(frozen=True)
class TypoPolicy:
    enabled: bool
    one_typo: int
    two_typos: int
    disabled_words: frozenset[str]
    disable_on_numbers: bool

    @classmethod
    def from_settings(cls, settings: dict[str, Any], analyzer: Analyzer) -> TypoPolicy:
        typo = settings.get("typoTolerance") or {}
        sizes = typo.get("minWordSizeForTypos") or {}
        return cls(
            enabled=typo.get("enabled", True),
            one_typo=sizes.get("oneTypo", 5),
            two_typos=sizes.get("twoTypos", 9),
            disabled_words=frozenset(
                word for entry in typo.get("disableOnWords") or () for word in analyzer.normalize(entry)
            ),
            disable_on_numbers=bool(typo.get("disableOnNumbers", False)),
        )

    def allowance(self, word: str) -> int:
        if not self.enabled or word in self.disabled_words:
            return 0
        if self.disable_on_numbers and is_number(word):
            return 0
        length = len(word)
        return 0 if length < self.one_typo else 1 if length < self.two_typos else 2


def is_number(word: str) -> bool:
    return bool(word) and set(word) <= _NUMBER_CHARS and any(char.isdigit() for char in word)


def derive(ctx: SearchContext, query: ParsedQuery, language: str | None) -> list[Derivations]:
    """Derivations of every term, then of every n-gram of consecutive plain terms."""
    policy = TypoPolicy.from_settings(ctx.settings, ctx.analyzer)
    synonyms = normalized_synonyms(ctx.analyzer, orjson.dumps(ctx.settings.get("synonyms") or {}))
    prefix_enabled = ctx.settings.get("prefixSearch", "indexingTime") != "disabled"
    derived = [_derive_term(ctx, term, policy, synonyms, language, prefix_enabled) for term in query.terms]
    terms = query.terms
    for size in range(2, MAX_NGRAM + 1):
        for start in range(len(terms) - size + 1):
            window = terms[start : start + size]
            if any(term.phrase for term in window):
                continue
            derived.append(_derive_ngram(ctx, window, policy, synonyms, prefix_enabled))
    return derived


def _derive_term(
    ctx: SearchContext,
    term: QueryTerm,
    policy: TypoPolicy,
    synonyms: dict[tuple[str, ...], list[tuple[str | None, ...]]],
    language: str | None,
    prefix_enabled: bool,
) -> Derivations:
    result = Derivations(term.index, term.index)
    if term.phrase:
        result.phrases.append((term.words, WordMatch(0, 0, True)))
        return result
    word = term.word
    result.words[word] = WordMatch(0, 0, True)
    if _too_long(word):
        return result  # never indexed, so it matches nothing (search.md §7.1)
    prefix = term.prefix and prefix_enabled
    if prefix:
        result.prefix = word
    allowance = policy.allowance(word)
    splittable = policy.enabled and len(word) >= MIN_SPLIT_LENGTH
    result.most_cost = max(allowance, STEM_COST if language is not None else 0, 1 if splittable else 0)
    if allowance:
        for variant, typos in _typo_variants(ctx, word, allowance, prefix, policy):
            result.words.setdefault(variant, WordMatch(typos, typos, False))
    if splittable:
        split = best_split(ctx.txn, ctx.env.words, ctx.index_id, word)
        if split is not None:
            result.phrases.append((split, WordMatch(1, 1, False)))
    for value in synonyms.get((word,), ()):
        _add_synonym(result, value, 0)
    if language is not None:
        stem = ctx.analyzer.stem(word, language)
        result.stem, result.stem_language = stem, language
    result.expansions = _expansions(ctx, result)
    return result


def _expansions(ctx: SearchContext, derivation: Derivations) -> frozenset[str] | None:
    """The words the prefix and stem match, or None when the prefix stands for too many to list.

    Snowball stems keep the word's beginning up to their last letter (``happi`` for ``happy``), so the
    words sharing a stem are found among those starting with the stem minus one letter.
    """
    found: set[str] = set()
    if derivation.prefix is not None:
        words = prefix_words(ctx.txn, ctx.env.words, ctx.index_id, derivation.prefix, EXPANSION_LIMIT + 1)
        if len(words) > EXPANSION_LIMIT:
            return None
        found.update(words)
    if derivation.stem is not None and derivation.stem_language is not None:
        stem, language = derivation.stem, derivation.stem_language
        start = stem[: max(len(stem) - 1, 2)]
        stemmer = ctx.analyzer.stem
        found.update(
            word
            for word in prefix_words(ctx.txn, ctx.env.words, ctx.index_id, start, EXPANSION_LIMIT)
            if stemmer(word, language) == stem
        )
    return frozenset(found)


def _derive_ngram(
    ctx: SearchContext,
    window: list[QueryTerm],
    policy: TypoPolicy,
    synonyms: dict[tuple[str, ...], list[tuple[str | None, ...]]],
    prefix_enabled: bool,
) -> Derivations:
    size = len(window)
    result = Derivations(window[0].index, window[-1].index)
    joined = "".join(term.word for term in window)
    result.words[joined] = WordMatch(size, 0, False)
    prefix = window[-1].prefix and prefix_enabled
    if prefix:
        result.prefix, result.prefix_cost = joined, size
    allowance = 0 if size >= MAX_NGRAM else max(0, policy.allowance(joined) - (size - 1))
    result.most_cost = size + allowance
    if allowance:
        for variant, typos in _typo_variants(ctx, joined, allowance, prefix, policy):
            result.words.setdefault(variant, WordMatch(size + typos, typos, False))
    for value in synonyms.get(tuple(term.word for term in window), ()):
        _add_synonym(result, value, size)
    return result


def _too_long(word: str) -> bool:
    return len(word) > MAX_WORD_BYTES // 4 and len(word.encode()) > MAX_WORD_BYTES


def _typo_variants(
    ctx: SearchContext, word: str, allowance: int, prefix: bool, policy: TypoPolicy
) -> list[tuple[str, int]]:
    if _too_long(word):
        return []
    variants = typo_words(ctx.txn, ctx.env.words, ctx.index_id, word, allowance, prefix=prefix)
    if policy.disable_on_numbers:
        variants = [(variant, typos) for variant, typos in variants if not is_number(variant)]
    return variants


def _add_synonym(result: Derivations, value: tuple[str | None, ...], cost: int) -> None:
    match = WordMatch(cost, 0, False)
    if len(value) == 1 and value[0] is not None:
        result.words.setdefault(value[0], match)
    else:
        result.phrases.append((value, match))


def expand_prefix(ctx: SearchContext, prefix: str) -> list[str]:
    """The vocabulary words a prefix stands for (capped), for per-document matching."""
    return prefix_words(ctx.txn, ctx.env.words, ctx.index_id, prefix)


@lru_cache(maxsize=64)
def _synonyms_cache(analyzer: Analyzer, raw: bytes) -> dict[tuple[str, ...], list[tuple[str | None, ...]]]:
    table: dict[tuple[str, ...], list[tuple[str | None, ...]]] = {}
    for key, values in orjson.loads(raw).items():
        key_words = tuple(
            token.normalized
            for token in analyzer.tokens(key)
            if token.kind is TokenKind.WORD and token.normalized and not token.stop_word
        )
        if not key_words or len(key_words) > MAX_NGRAM:
            continue
        entries = table.setdefault(key_words, [])
        for value in values:
            words = tuple(
                None if token.stop_word else token.normalized
                for token in analyzer.tokens(value)
                if token.kind is TokenKind.WORD and token.normalized
            )
            if any(word is not None for word in words) and words not in entries:
                entries.append(words)
    return table


def normalized_synonyms(
    analyzer: Analyzer, raw: bytes
) -> dict[tuple[str, ...], list[tuple[str | None, ...]]]:
    """The synonyms map with keys and values normalised like queries; cached per settings value."""
    return _synonyms_cache(analyzer, raw)
