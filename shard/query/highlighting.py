"""The query as the highlighter sees it: which document words match which term, and how much of them.

Built from the same derivations that matched the documents, so a highlighted word is always one the
engine matched (typo variants, prefixes, stems, synonyms, split and concatenated words, phrases).
"""

from __future__ import annotations

from collections.abc import Sequence

from shard.highlight import Needles
from shard.query.derivations import Derivations

Phrase = tuple[int, tuple[str | None, ...]]


class DerivationMatcher:
    """Implements ``shard.highlight.QueryMatcher``."""

    def __init__(self, derivations: list[Derivations], query_words: Sequence[str]) -> None:
        self._words: dict[str, tuple[int, int | None]] = {}
        """word -> (term, characters to highlight; None = the whole word)."""
        self._prefixes: list[tuple[str, int]] = []
        phrases: list[Phrase] = []
        for derivation in derivations:
            term = derivation.first
            typed = None if derivation.prefix is None else len(derivation.prefix)
            for word, match in derivation.words.items():
                # A typo variant of the word being typed highlights as far as the user typed.
                self._words.setdefault(word, (term, typed if match.typos else None))
            for word in derivation.prefix_words:
                self._words.setdefault(word, (term, typed))
            for word in derivation.stem_words:
                self._words.setdefault(word, (term, None))
            if derivation.prefix is not None and not derivation.prefix_complete:
                self._prefixes.append((derivation.prefix, term))
            phrases.extend((term, words) for words, _ in derivation.phrases if len(words) > 1)
        for word in query_words:
            self._words.setdefault(word, (0, None))
        self._phrases = phrases
        # Listed prefix words start with their prefix: the prefix stands for all of them.
        prefixes = [derivation.prefix for derivation in derivations if derivation.prefix is not None]
        self._needles = Needles(self._words, prefixes)

    def match(self, word: str) -> tuple[int, int] | None:
        found = self._words.get(word)
        if found is not None:
            term, typed = found
            return term, len(word) if typed is None else min(typed, len(word))
        for prefix, term in self._prefixes:
            if word.startswith(prefix):
                return term, len(prefix)
        return None

    @property
    def phrases(self) -> Sequence[Phrase]:
        return self._phrases

    @property
    def needles(self) -> Needles:
        return self._needles
