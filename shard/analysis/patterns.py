"""Compiling an index's separator settings into the tokenizer's regular expressions (once per config).

Effective separators are the defaults (every character that is not a letter, digit or mark) plus
``separatorTokens`` minus ``nonSeparatorTokens`` (search.md §6.8). A single-character non-separator
simply becomes a word character. Dictionary entries, separator tokens that are not already default
separators, and multi-character non-separators are "custom tokens": like charabia's Aho-Corasick pass,
they are found anywhere in the text (leftmost-longest, case-insensitively) before words are formed, and
the dictionary wins over separators. Texts in which no custom token occurs take the fast indexing path.

A word is a maximal run of word characters; a single ``.`` or ``,`` between two digits joins the run
(``3.14``, ``1,000``). Everything else is a separator.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from shard.analysis.charclasses import DOT, HARD_SEPARATORS, SPACED_HARD, char_classes, escape_class
from shard.analysis.config import AnalysisConfig

CUSTOM, WORD, SEPARATOR, SPACELESS = "custom", "word", "separator", "spaceless"
"""Group names of ``Patterns.general``."""

Search = Callable[[str], re.Match[str] | None]


@dataclass(frozen=True)
class Patterns:
    find_custom: Search | None
    """Finds a custom token; a text without any (or a config without any) may take the fast path."""
    split_sentences: Callable[[str], list[str]]
    """Fast path: the text's pieces between hard separators (positions are consecutive within one)."""
    find_words: Callable[[str], list[str]]
    iter_words: Callable[[str], Iterator[re.Match[str]]]
    """Fast path: ``find_words`` with offsets."""
    find_words_and_runs: Callable[[str], list[str]]
    """Fast path: words and whole space-less runs, for texts that have some."""
    find_spaceless: Search
    starts_spaceless: Search
    general: re.Pattern[str]
    """Alternatives, in priority order: custom token (if any) | word | separators | space-less run."""
    is_hard_run: Search
    is_hard_final_run: Search
    """For a run that ends the text, where a final ``.`` is followed by no word."""
    custom_separators: frozenset[str]
    """Case-folded custom tokens that are separators (the other custom tokens are words)."""


def _alternation(tokens: list[str]) -> str:
    """Longest first, so that the regex's first-match alternation behaves leftmost-longest."""
    return "|".join(re.escape(token) for token in sorted(tokens, key=lambda token: (-len(token), token)))


@functools.lru_cache(maxsize=64)
def build_patterns(config: AnalysisConfig) -> Patterns:
    """Shared by the analysers of equal configs: compiling the large Unicode sets takes ~0.1 s."""
    classes = char_classes()
    is_word_char = re.compile(f"{classes.word.char()}|{classes.spaceless.char()}").fullmatch
    non_separators = set(config.non_separator_tokens)
    joining = escape_class("".join(sorted(t for t in non_separators if len(t) == 1 and not is_word_char(t))))
    multi_non_separators = [token for token in non_separators if len(token) > 1]
    dictionary = set(config.dictionary)
    separators = {
        token
        for token in config.separator_tokens
        if token not in non_separators and token not in dictionary and (len(token) > 1 or is_word_char(token))
    }
    custom = sorted(dictionary | separators)

    # Fast path: no custom token occurs, so words need no guard.
    word = _word(classes.word.run(joining), r"(?<=\d)[.,](?=\d)")
    spaceless_run = classes.spaceless.run()
    spaceless_char = re.compile(classes.spaceless.char())
    hard_chars = escape_class("".join(char for char in HARD_SEPARATORS if char not in non_separators))
    hard = f"[{hard_chars}]" if hard_chars else "(?!)"
    dot_is_separator = DOT not in non_separators
    spaced = "".join(char for char in SPACED_HARD if char not in non_separators)
    spaced_hard = f"|[{re.escape(spaced)}] " if spaced else ""
    sentence_end = hard + spaced_hard

    # General path. Separators: a run of BMP non-letters, else one astral non-letter (words come first).
    non_letter = f"[^{classes.word.bmp}{joining}{classes.spaceless.bmp}\\U00010000-\\U0010ffff]"
    stops = custom + multi_non_separators
    general_word, general_spaceless_run, non_letters = word, spaceless_run, f"{non_letter}+"
    if stops:  # each unit of a word or of a separator run checks that no custom token starts there
        guard = f"(?!(?i:{_alternation(custom)}))" if custom else ""
        unit = classes.word.char(joining)
        if multi_non_separators:
            unit = f"(?:(?i:{_alternation(multi_non_separators)})|{unit})"
        general_word = _word(f"(?:{guard}{unit})+", rf"(?<=\d){guard}[.,](?=\d)")
        general_spaceless_run = f"(?:{guard}{classes.spaceless.char()})+"
        non_letters = f"(?:(?!(?i:{_alternation(stops)})){non_letter})+"
    astral_non_letter = f"(?!{classes.spaceless.char()})[\\s\\S]"
    general = (
        (f"(?P<{CUSTOM}>(?i:{_alternation(custom)}))|" if custom else "")
        + f"(?P<{WORD}>{general_word})|(?P<{SEPARATOR}>{non_letters}|{astral_non_letter})"
        + f"|(?P<{SPACELESS}>{general_spaceless_run})"
    )

    return Patterns(
        find_custom=re.compile(f"(?i:{_alternation(stops)})").search if stops else None,
        split_sentences=re.compile(f"(?:{sentence_end})+").split,
        find_words=re.compile(word).findall,
        iter_words=re.compile(word).finditer,
        find_words_and_runs=re.compile(f"{spaceless_run}|{word}").findall,
        find_spaceless=spaceless_char.search,
        starts_spaceless=spaceless_char.match,
        general=re.compile(general),
        is_hard_run=re.compile(hard + spaced_hard).search,
        is_hard_final_run=re.compile(hard + (r"|\." if dot_is_separator else "")).search,
        custom_separators=frozenset(token.casefold() for token in separators),
    )


def _word(run: str, number_join: str) -> str:
    """A run of word characters; ``.`` or ``,`` between two digits continues it."""
    return f"{run}(?:{number_join}{run})*"
