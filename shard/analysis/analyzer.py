"""The analyser: one config's tokenizer and normaliser, used identically at indexing and at query time."""

from __future__ import annotations

import re
from functools import partial
from itertools import compress

from icu4py.breakers import WordBreaker

from shard.analysis.attributes import LocalizedAttributes
from shard.analysis.config import AnalysisConfig
from shard.analysis.language import Stemmers, detect_language
from shard.analysis.locales import icu_locale
from shard.analysis.memo import Memo
from shard.analysis.normalize import fold
from shard.analysis.patterns import build_patterns
from shard.analysis.segmenter import prime_word_breaker, segment
from shard.analysis.tokens import HARD_GAP, MAX_POSITION, MAX_WORD_BYTES, Token, TokenKind

_span = re.Match.span
_group = re.Match.group
_SAFE_CHARS = MAX_WORD_BYTES // 4
"""A word of at most this many characters cannot exceed the byte limit (UTF-8 uses at most 4 bytes)."""


class Analyzer:
    """Build one per config and thread: its memos are plain dicts."""

    def __init__(self, config: AnalysisConfig) -> None:
        self.config = config
        self._patterns = build_patterns(config)
        self._stop_words = config.stop_words
        self._folds = Memo(fold)
        self._index_forms = Memo(self._index_form)
        self._value_forms: dict[tuple[str, ...], Memo] = {}
        self._localized = LocalizedAttributes(config.localized_attributes)
        self._stemmers = Stemmers()
        prime_word_breaker()  # ICU's segmentation must not depend on what was segmented before

    @property
    def has_custom_tokens(self) -> bool:
        """Whether ``dictionary`` or ``separatorTokens`` entries may cut words inside a letter run."""
        return self._patterns.find_custom is not None

    def locales_for(self, field: str) -> tuple[str, ...]:
        """Locales of the first ``localizedAttributes`` rule matching the dotted field name; () = detect."""
        return self._localized.locales_for(field)

    def index_text(self, text: str, locales: tuple[str, ...] = ()) -> tuple[list[str], list[int], int]:
        """The indexed words of one field value, their positions, and the positions it uses.

        Consecutive words are 1 position apart, or 8 across a hard separator (sentence end). Stop
        words, words normalising to nothing and words over 250 bytes are left out but keep their
        position, exactly as in ``tokens``. The third value is the last position used + 1 (0 when
        the text has no word), for the caller to continue the next array value after it.
        """
        patterns = self._patterns
        if patterns.find_custom is not None and patterns.find_custom(text):
            return self._index_tokens(text, locales)
        # Split into sentences at hard separators, then each sentence into words, in C: positions
        # within a sentence are consecutive.
        spaceless = not text.isascii() and patterns.find_spaceless(text) is not None
        find = patterns.find_words_and_runs if spaceless else patterns.find_words
        words: list[str] = []
        positions: list[int] = []
        forms = self._index_forms.__getitem__
        last = -1
        for sentence in patterns.split_sentences(text):
            found = find(sentence)
            if spaceless:
                found = self._break_runs(found, locales)
            if not found:
                continue
            base = 0 if last < 0 else last + HARD_GAP
            room = MAX_POSITION + 1 - base
            if room <= 0:
                break
            found = found[:room]
            normalized = list(map(forms, found))  # "" for words that are not indexed
            if "" in normalized:
                words.extend(compress(normalized, normalized))
                positions.extend(compress(range(base, base + len(normalized)), normalized))
            else:
                words.extend(normalized)
                positions.extend(range(base, base + len(normalized)))
            last = base + len(found) - 1
        return words, positions, last + 1

    def tokens(self, text: str, locales: tuple[str, ...] = ()) -> list[Token]:
        """Every word and separator run of ``text`` with offsets, normalised form and position.

        Its indexable words and their positions are exactly ``index_text``'s. Nothing past the position
        cap is produced.
        """
        tokens: list[Token] = []
        folds = self._folds
        stop_words = self._stop_words
        for kind, start, end, position in segment(self._patterns, text, icu_locale(locales)):
            raw = text[start:end]
            if kind is TokenKind.WORD:
                normalized = folds[raw]
                tokens.append(Token(kind, raw, normalized, start, end, position, normalized in stop_words))
            else:
                tokens.append(Token(kind, raw, raw, start, end, position, False))
        return tokens

    def word_spans(self, text: str) -> tuple[list[str], list[tuple[int, int]]] | None:
        """The normalised words of ``text`` and their character spans, as ``tokens`` gives them, found
        in C: highlighting needs no more than where the matching words are. None where only the general
        tokenizer is exact: custom tokens, space-less scripts, or so many words that positions could
        pass the cap."""
        patterns = self._patterns
        if patterns.find_custom is not None:
            return None
        if text.isascii():
            found = list(patterns.iter_words(text.lower()))  # lower() is what folding does to ASCII words
            words = list(map(_group, found))
        elif patterns.find_spaceless(text) is None:
            found = list(patterns.iter_words(text))
            words = list(map(self._folds.__getitem__, map(_group, found)))
        else:
            return None
        if len(words) * HARD_GAP > MAX_POSITION:
            return None
        return words, list(map(_span, found))

    def is_sentence_break(self, separators: str) -> bool:
        """Whether the separators between two words end a sentence (the next word is 8 positions on)."""
        return self._patterns.is_hard_run(separators) is not None

    def normalize(self, text: str) -> list[str]:
        """The normalised words of a short text (a stop word, a synonym, a query word); stop words kept."""
        return [
            token.normalized
            for token in self.tokens(text)
            if token.kind is TokenKind.WORD and token.normalized
        ]

    def normalize_value(self, text: str, locales: tuple[str, ...] = ()) -> str:
        """A whole value normalised as its words are, separators folded and kept in place: facet search
        (search.md §3.1) matches a query's form as a prefix of a value's form. Memoised per locales,
        since one facet search normalises every value of a field."""
        forms = self._value_forms.get(locales)
        if forms is None:
            forms = self._value_forms[locales] = Memo(partial(self._value_form, locales))
        return forms[text]

    def detect_language(self, text: str) -> str | None:
        """ISO 639-3 code of the text's language if confidently detected and stemmable, else None."""
        return detect_language(text)

    def stem(self, word: str, language: str) -> str:
        """Snowball stem of a normalised word; the word itself when the language has no stemmer."""
        return self._stemmers.stem(word, language)

    def _break_runs(self, found: list[str], locales: tuple[str, ...]) -> list[str]:
        """``found`` with its space-less runs cut into words."""
        starts_spaceless = self._patterns.starts_spaceless
        words: list[str] = []
        for word in found:
            if starts_spaceless(word):
                words.extend(WordBreaker(word, icu_locale(locales)))
            else:
                words.append(word)
        return words

    def _index_tokens(self, text: str, locales: tuple[str, ...]) -> tuple[list[str], list[int], int]:
        """``index_text`` through the general tokenizer, for texts containing custom tokens."""
        words: list[str] = []
        positions: list[int] = []
        length = 0
        forms = self._index_forms
        for kind, start, end, position in segment(self._patterns, text, icu_locale(locales)):
            if kind is TokenKind.WORD:
                length = position + 1
                form = forms[text[start:end]]
                if form:
                    words.append(form)
                    positions.append(position)
        return words, positions, length

    def _value_form(self, locales: tuple[str, ...], text: str) -> str:
        return "".join(
            token.normalized if token.kind is TokenKind.WORD else fold(token.text)
            for token in self.tokens(text, locales)
        )

    def _index_form(self, word: str) -> str:
        """The indexed form of a raw word, or "" when it is not indexed."""
        normalized = self._folds[word]
        if normalized in self._stop_words:
            return ""
        if len(normalized) > _SAFE_CHARS and len(normalized.encode()) > MAX_WORD_BYTES:
            return ""
        return normalized
