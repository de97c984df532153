"""Every way a query term can match a document word (search.md §7.1, §7.3, §6.7).

A term matches its own word, typo variants of it, any word it prefixes (last term), words with the
same stem, and its synonyms; a word may also match split in two, and 2-3 consecutive terms may match
concatenated (n-grams). Vocabulary lookups happen here, once per query; what each derivation costs
for the typo rule and whether it counts as exact is decided here too, so docsets, per-document
matching and highlighting all agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from common.typo_caps import Found, LookupKey
from shard.analysis import MAX_WORD_BYTES, Analyzer, TokenKind
from shard.index.read_cache import PREFIX_WORDS, STEM_WORDS, TYPO_WORDS, WORD_SPLITS
from shard.query.context import SearchContext
from shard.query.parse import ParsedQuery, QueryTerm
from shard.query.splits import best_split
from shard.query.typos import typo_words
from shard.query.vocabulary import PREFIX_LIMIT, prefix_words

MAX_NGRAM = 3
STEM_COST = 1
"""What a word sharing only the stem costs the typo rule among the documents that need a stem to match
(``ranking/stem_tier.py``); a query word's highest cost is at least this, as the reference's is 1."""
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
    prefix_words: tuple[str, ...] = ()
    """The vocabulary words the prefix stands for, in key order, at most ``PREFIX_LIMIT``."""
    prefix_complete: bool = True
    """False when the prefix stands for more words than listed: per-document matching then tests
    each document word, and the docsets of a short prefix come from the prefixes table."""
    stem: str | None = None
    stem_words: frozenset[str] = frozenset()
    """Vocabulary words sharing the stem (besides those already listed as ``words``)."""
    phrases: list[tuple[tuple[str | None, ...], WordMatch]] = field(default_factory=list)
    """Consecutive words (None = any word): quoted phrases, multi-word synonyms, split words."""
    most_cost: int = 0
    """The highest typo cost the settings allow this derivation, whatever this shard's vocabulary
    holds: the typo rule's maximum must be the same on every shard for their scores to compare."""

    def without_stem(self) -> Derivations:
        """The same matches but the stem's: what the first tier ranks with (``ranking/stem_tier.py``)."""
        if self.stem is None:
            return self
        # A shallow copy, as dataclasses.replace makes, at a quarter of its cost (every search).
        clone = object.__new__(Derivations)
        clone.__dict__ = {**self.__dict__, "stem": None, "stem_words": frozenset()}
        return clone


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


def derive(ctx: SearchContext, query: ParsedQuery, language: str) -> list[Derivations]:
    """Derivations of every term, then of every n-gram of consecutive plain terms; ``language`` is the
    query's stemming language (ISO 639-3)."""
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
    language: str,
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
        _set_prefix(ctx, result, word, 0)
    allowance = policy.allowance(word)
    splittable = policy.enabled and len(word) > 1
    result.most_cost = max(allowance, STEM_COST, 1 if splittable else 0)
    if allowance:
        for variant, typos in _typo_variants(ctx, word, allowance, prefix, policy):
            result.words.setdefault(variant, WordMatch(typos, typos, False))
    if splittable:
        (split,) = ctx.cached(
            (WORD_SPLITS, ctx.index_id, word),
            lambda: (best_split(ctx, word),),
            lambda _: 160,
        )
        if split is not None:
            result.phrases.append((split, WordMatch(1, 1, False)))
    for value in synonyms.get((word,), ()):
        _add_synonym(result, value, 0)
    _set_stem(ctx, result, word, language)
    return result


def _set_prefix(ctx: SearchContext, derivation: Derivations, prefix: str, cost: int) -> None:
    """The expansion is looked up once, for docsets, per-document matching and highlighting alike."""
    listed: tuple[str, ...] = ctx.cached(
        (PREFIX_WORDS, ctx.index_id, prefix),
        lambda: tuple(prefix_words(ctx.txn, ctx.env.words, ctx.index_id, prefix, PREFIX_LIMIT + 1)),
        lambda found: 96 + sum(64 + len(word) for word in found),
    )
    derivation.prefix, derivation.prefix_cost = prefix, cost
    derivation.prefix_words = tuple(listed[:PREFIX_LIMIT])
    derivation.prefix_complete = len(listed) <= PREFIX_LIMIT


def _set_stem(ctx: SearchContext, derivation: Derivations, word: str, language: str) -> None:
    """Snowball stems keep the word's beginning up to their last letter (``happi`` for ``happy``), so
    the words sharing a stem are found among those starting with the stem minus one letter: all of
    them, not the first ``PREFIX_LIMIT`` (a few thousand for a two-letter start on a large shard, a
    few ms once per batch), or which words match would depend on how many a shard holds."""
    stemmer = ctx.analyzer.stem
    stem = stemmer(word, language)
    start = stem[: max(len(stem) - 1, 2)]
    derivation.stem = stem
    sharing: frozenset[str] = ctx.cached(
        (STEM_WORDS, ctx.index_id, (stem, language)),
        lambda: frozenset(
            candidate
            for candidate in prefix_words(ctx.txn, ctx.env.words, ctx.index_id, start, None)
            if stemmer(candidate, language) == stem
        ),
        lambda found: 96 + sum(64 + len(candidate) for candidate in found),
    )
    derivation.stem_words = sharing.difference(derivation.words)


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
        _set_prefix(ctx, result, joined, size)
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
) -> Sequence[tuple[str, int]]:
    key = (word, allowance, prefix)
    variants = ctx.typo_caps.lookup(key, lambda: typo_lookup(ctx, key))
    if policy.disable_on_numbers:
        variants = [(variant, typos) for variant, typos in variants if not is_number(variant)]
    return variants


def typo_lookup(ctx: SearchContext, key: LookupKey) -> Found:
    """This shard's words of a typo lookup (capped here, ``typos.TypoCaps`` caps them index-wide)."""
    word, allowance, prefix = key
    found: Found = ctx.cached(
        (TYPO_WORDS, ctx.index_id, key),
        lambda: tuple(typo_words(ctx.txn, ctx.env.words, ctx.index_id, word, allowance, prefix=prefix)),
        lambda found: 96 + sum(64 + len(variant) for variant, _ in found),
    )
    return found


def _add_synonym(result: Derivations, value: tuple[str | None, ...], cost: int) -> None:
    match = WordMatch(cost, 0, False)
    if len(value) == 1 and value[0] is not None:
        result.words.setdefault(value[0], match)
    else:
        result.phrases.append((value, match))


@lru_cache(maxsize=64)
def normalized_synonyms(
    analyzer: Analyzer, raw: bytes
) -> dict[tuple[str, ...], list[tuple[str | None, ...]]]:
    """The synonyms map with keys and values normalised like queries; cached per settings value."""
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
