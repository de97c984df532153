"""Finding a query's matches in one text: words, prefixes and phrases, as word ranges and character spans."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress, count, repeat
from operator import is_, itemgetter
from typing import NamedTuple, Protocol

from shard.analysis import Analyzer, Token, TokenKind, fold

_kind = itemgetter(Token._fields.index("kind"))
_normalized = itemgetter(Token._fields.index("normalized"))
_position = itemgetter(Token._fields.index("position"))
_span = itemgetter(Token._fields.index("start"), Token._fields.index("end"))

Phrase = tuple[int, tuple[str | None, ...]]
"""(query term index, normalised words); None stands for any word (a stop word inside the phrase)."""

WordMatch = tuple[int, int]
"""(query term index, number of leading characters of the normalised word to highlight)."""


class Needles(NamedTuple):
    """What ``QueryMatcher.match`` accepts, as strings to look for (phrases are not included)."""

    words: Iterable[str]
    """Normalised words that match whole."""
    prefixes: Iterable[str]
    """Normalised prefixes: a word starting with one matches (listed words starting with one may be
    left in ``words``)."""


class QueryMatcher(Protocol):
    """What the query engine tells the highlighter about its query (the engine implements this)."""

    def match(self, word: str) -> WordMatch | None:
        """For a normalised document word, the term it matches and how many leading characters to highlight.

        A whole-word match (exact, typo, synonym) gives ``len(word)``; a prefix match gives the query
        prefix's length (``lov`` on ``lovely`` gives 3). None when the word matches no term.
        """
        ...

    @property
    def phrases(self) -> Sequence[Phrase]:
        """Quoted phrases and multi-word synonyms: each occurrence is one match from first to last word."""
        ...

    @property
    def needles(self) -> Needles:
        """What every word ``match`` accepts is or starts with: a text holding none of them (nor a
        phrase's word) holds no match, which is cheap to rule out before tokenising it."""
        ...


@dataclass(frozen=True)
class WordTable:
    """A matcher from explicit tables: enough for tests, and for an engine that lists its derivations."""

    words: Mapping[str, WordMatch] = field(default_factory=dict)
    prefixes: Sequence[tuple[str, int]] = ()
    """(normalised prefix, term index): a word starting with the prefix highlights the prefix's length."""
    phrases: Sequence[Phrase] = ()

    @property
    def needles(self) -> Needles:
        return Needles(self.words, [prefix for prefix, _ in self.prefixes])

    def match(self, word: str) -> WordMatch | None:
        found = self.words.get(word)
        if found is not None:
            return found
        for prefix, term in self.prefixes:
            if word.startswith(prefix):
                return term, len(prefix)
        return None


NO_MATCH = WordTable()
"""The matcher of a placeholder search: crops fall back to the first words, nothing is highlighted."""


class Match(NamedTuple):
    term: int
    first_word: int
    last_word: int
    """Word indices (counting word tokens only) of the match's first and last word."""
    start: int
    end: int
    """Character span of the highlighted text: a prefix match covers the matched prefix only."""


@dataclass(frozen=True)
class AnalysedText:
    tokens: list[Token]
    words: list[int]
    """Token index of each word, in order."""
    matches: list[Match]
    """Ordered by first word; word matches inside a phrase match are left out (the phrase covers them)."""


class _AnchoredPhrase(NamedTuple):
    """A phrase and its first real word, whose occurrences are the only places it can start from."""

    term: int
    words: tuple[str | None, ...]
    anchor: int
    anchor_word: str


def _anchored(term: int, words: tuple[str | None, ...]) -> _AnchoredPhrase | None:
    """None for a phrase of stop words only: it has nothing to look up."""
    for anchor, word in enumerate(words):
        if word is not None:
            return _AnchoredPhrase(term, words, anchor, word)
    return None


class _Memo(dict[str, WordMatch | None]):
    """Per-query memo of ``match``: document vocabularies repeat, and ``map`` over it runs in C."""

    def __init__(self, matcher: QueryMatcher) -> None:
        super().__init__({"": None})
        self._match = matcher.match

    def __missing__(self, word: str) -> WordMatch | None:
        found = self[word] = self._match(word)
        return found


class MatchFinder:
    """One per query: analyses texts with the index's analyser and finds the query's matches in them."""

    def __init__(self, matcher: QueryMatcher, analyzer: Analyzer) -> None:
        self._memo = _Memo(matcher)
        self._phrases = [
            anchored for term, words in matcher.phrases if (anchored := _anchored(term, words)) is not None
        ]
        self._analyzer = analyzer
        self._anchors = frozenset(phrase.anchor_word for phrase in self._phrases)
        # The indexing path skips stop words; when the query may match one, only the full token
        # stream can tell whether a text holds a match.
        stop_words = analyzer.config.stop_words
        self._screens = not (self._anchors & stop_words) and not any(map(self._memo.__getitem__, stop_words))
        self._bounded = not analyzer.has_custom_tokens
        words, prefixes = matcher.needles
        phrase_words = (word for phrase in self._phrases for word in phrase.words if word is not None)
        self._needles = _needle_pattern([*words, *phrase_words], prefixes, self._bounded)
        self.matches_nothing = self._needles is None
        """Placeholder searches: highlighting and match positions can skip tokenising altogether."""

    def texts_that_may_match(self, texts: Sequence[str]) -> list[int]:
        """Indices of the ``texts`` (all ASCII) in which a needle is found, from one search over them all:
        of a hit's few dozen texts (title, overview, cast names), few match.

        An ASCII text's words fold to slices of ``text.lower()``: if no needle is found in it, no word
        matches.
        """
        if self._needles is None:
            return []
        ends = list(accumulate(len(text) + 1 for text in texts))
        starts = (found.start() for found in self._needles.finditer("\n".join(texts).lower()))
        return sorted({bisect_right(ends, start) for start in starts})

    def may_match(self, text: str, locales: tuple[str, ...]) -> bool:
        """Whether a text ``texts_that_may_match`` kept, or could not take (not ASCII), can hold a match;
        False lets it be shown as is without tokenising it.

        A needle found at word edges in an ASCII text almost always is a match. Otherwise the indexing
        path (``index_text``, regular expressions in C) finds the words several times faster than the
        full token stream with offsets that highlighting needs, and gives the same normalised words.
        """
        if text.isascii() and self._bounded:
            return True
        if not self._screens:
            return True
        words, _, _ = self._analyzer.index_text(text, locales)
        return any(map(self._memo.__getitem__, words)) or not self._anchors.isdisjoint(words)

    def matches(self, text: str, locales: tuple[str, ...]) -> list[Match]:
        """``analyse(text, locales).matches``, without the token stream where the analyser can skip it:
        a highlighted text of a few hundred words costs several times less."""
        found_words = self._analyzer.word_spans(text)
        if found_words is None:
            return self.analyse(text, locales).matches
        norms, spans = found_words
        is_break = self._analyzer.is_sentence_break

        def consecutive(first: int, last: int) -> bool:
            return not any(is_break(text[spans[at][1] : spans[at + 1][0]]) for at in range(first, last))

        return self._matches(text, norms, spans, consecutive)

    def analyse(self, text: str, locales: tuple[str, ...]) -> AnalysedText:
        # Per-token work runs in C (map, compress, itemgetter): texts have hundreds of tokens, few matches.
        tokens = self._analyzer.tokens(text, locales)
        words = list(compress(count(), map(is_, map(_kind, tokens), repeat(TokenKind.WORD))))
        word_tokens = list(map(tokens.__getitem__, words))
        positions = list(map(_position, word_tokens))

        def consecutive(first: int, last: int) -> bool:
            return positions[last] - positions[first] == last - first

        norms = list(map(_normalized, word_tokens))
        matches = self._matches(text, norms, list(map(_span, word_tokens)), consecutive)
        return AnalysedText(tokens, words, matches)

    def _matches(
        self,
        text: str,
        norms: list[str],
        spans: list[tuple[int, int]],
        consecutive: Callable[[int, int], bool],
    ) -> list[Match]:
        """Word and phrase matches from the words' normalised forms and character spans.

        ``consecutive(first, last)``: whether those words have consecutive positions (one sentence).
        """
        found = list(map(self._memo.__getitem__, norms))
        matches: list[Match] = []
        for at, (term, chars) in zip(compress(count(), found), filter(None, found), strict=True):
            start, end = spans[at]
            matches.append(
                Match(term, at, at, start, start + _original_length(text[start:end], norms[at], chars))
            )
        if self._phrases:
            phrases = _phrase_matches(self._phrases, norms, spans, consecutive)
            if phrases:
                covered = {at for phrase in phrases for at in range(phrase.first_word, phrase.last_word + 1)}
                matches = [match for match in matches if match.first_word not in covered]
                matches.extend(phrases)
                matches.sort(key=lambda match: (match.first_word, match.last_word))
        return matches


# After a needle's first character: the character before that one is no letter or digit (or there is
# none). Placed there rather than first, the pattern starts with a literal, which lets the regex engine
# skip the positions no needle starts with.
_EDGE_BEFORE_FIRST, _EDGE_AFTER = "(?<![a-z0-9].)", "(?![a-z0-9])"


def _needle_pattern(words: Iterable[str], prefixes: Iterable[str], bounded: bool) -> re.Pattern[str] | None:
    """The needles as one pattern over lower-cased ASCII text; None when there is none to find.

    ``bounded``: only custom tokens (``dictionary``, ``separatorTokens``) cut a word inside a run of
    ASCII letters and digits, so without them a needle must also start (a whole word: and end) at
    the edge of such a run. That keeps ``a`` from being found in every text. The needles are merged
    into a trie (``watch|watcher`` as ``watch(?:er)?``): a query's typo derivations share prefixes,
    and the engine tries an alternation's branches one by one.
    """
    starts = _shortest(prefixes)
    whole = {word for word in words if not word.startswith(tuple(starts))}
    if not whole and not starts:
        return None
    trie = _NeedleTrie()
    for word in whole:
        trie.add(word, prefix=False)
    for prefix in starts:
        trie.add(prefix, prefix=True)
    return re.compile(trie.pattern(_EDGE_BEFORE_FIRST if bounded else "", _EDGE_AFTER if bounded else ""))


class _NeedleTrie:
    def __init__(self) -> None:
        self.children: dict[str, _NeedleTrie] = {}
        self.ends_word = False
        self.ends_prefix = False

    def add(self, needle: str, prefix: bool) -> None:
        node = self
        for char in needle:
            node = node.children.setdefault(char, _NeedleTrie())
        if prefix:
            node.ends_prefix = True
        else:
            node.ends_word = True

    def pattern(self, after_first: str, after_word: str) -> str:
        """This node's continuations; ``after_first`` goes after the first character of a needle."""
        if self.ends_prefix:
            return ""  # a prefix is found as soon as it is: whatever follows, and longer needles, add nothing
        branches = [
            re.escape(char) + after_first + child.pattern("", after_word)
            for char, child in sorted(self.children.items())
        ]
        if self.ends_word:
            branches.append(after_word)
        return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"


def _shortest(prefixes: Iterable[str]) -> list[str]:
    """The prefixes without those that start with a shorter one: they would find nothing more."""
    kept: list[str] = []
    for prefix in sorted(set(prefixes), key=len):
        if not prefix.startswith(tuple(kept)):
            kept.append(prefix)
    return kept


def _original_length(text: str, normalized: str, chars: int) -> int:
    """Characters of a word's original spelling covering ``chars`` normalised ones (``ﬁ`` folds to two)."""
    if chars >= len(normalized):
        return len(text)
    if len(text) == len(normalized):
        return chars
    for length in range(1, len(text)):
        if len(fold(text[:length])) >= chars:
            return length
    return len(text)


def _phrase_matches(
    phrases: list[_AnchoredPhrase],
    norms: list[str],
    spans: list[tuple[int, int]],
    consecutive: Callable[[int, int], bool],
) -> list[Match]:
    """Non-overlapping occurrences of each phrase, its words consecutive within one sentence."""
    anchors = {phrase.anchor_word for phrase in phrases}
    where: dict[str, list[int]] = {}
    for at, norm in enumerate(norms):
        if norm in anchors:
            where.setdefault(norm, []).append(at)
    found: list[Match] = []
    for term, phrase, anchor, anchor_word in phrases:
        size = len(phrase)
        next_free = 0
        for at in where.get(anchor_word, ()):
            first = at - anchor
            last = first + size - 1
            if first < next_free or first < 0 or last >= len(norms):
                continue
            if not all(word is None or word == norms[first + offset] for offset, word in enumerate(phrase)):
                continue
            if consecutive(first, last):
                found.append(Match(term, first, last, spans[first][0], spans[last][1]))
                next_free = last + 1
    return found
