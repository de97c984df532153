"""Short prefixes precomputed at indexing time, so that as-you-type queries read postings, not words.

A prefix of one to three characters stands for hundreds to thousands of words (``s``, ``sa``, ``san``),
so expanding it at query time means a long key-range scan and a union of as many postings; every
document's words instead post their first one, two and three characters to the ``prefixes`` table
(with the START marks of the field's first word, ``postings.py``), kept in step with the words table
by the same batch deltas, on every addition, update, deletion and reindex. Longer prefixes stand for
few enough words to be expanded from the words table.

A short prefix matches thousands of documents, far more than a query may score from their token
records, so the table also says where in each field the prefix first stands: the term
``prefix + LEVEL_MARK + chr(level)`` holds the documents whose field's first word starting with the
prefix is at a position of that word-position level (1 to 10: positions 1, 2-4, 5-7, 8-11, 12-15,
16-23, 24-64, 65-256, 257-1024, beyond; level 0 is the START mark). The word position rule then
splits a one-term bucket with bitmaps alone (``shard/query/ranking/marks.py``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence

SHORT_PREFIX_LENGTHS = (1, 2, 3)
"""Prefix lengths (in characters) the ``prefixes`` table holds."""
LEVEL_MARK = "\x01"
"""Joins a prefix and its level in a term: normalised words never hold control characters."""
_LEVEL_STARTS = (0, 1, 2, 5, 8, 12, 16, 24, 65, 257, 1025)
"""The first position of each level: the word position rule's cost of a first query word there."""
LEVELS = range(1, len(_LEVEL_STARTS))
"""The levels stored (0, the field's first position, is the START mark)."""


def is_short(prefix: str) -> bool:
    """Whether the ``prefixes`` table holds ``prefix``'s documents."""
    return len(prefix) in SHORT_PREFIX_LENGTHS


def short_prefixes(words: Iterable[str]) -> dict[str, None]:
    """The short prefixes of ``words``, in order and without repeats: the first word's lead."""
    return {word[:length]: None for word in words for length in SHORT_PREFIX_LENGTHS}


def own_prefixes(word: str) -> int:
    """How many of ``short_prefixes``' leading entries belong to ``word`` when it comes first."""
    return min(len(word), SHORT_PREFIX_LENGTHS[-1])


def position_level(position: int) -> int:
    """The word position rule's cost of a query's first word found at ``position`` in a field."""
    return bisect_right(_LEVEL_STARTS, position) - 1


def level_term(prefix: str, level: int) -> str:
    return prefix + LEVEL_MARK + chr(level)


def level_terms(words: Sequence[str], positions: Sequence[int]) -> list[str]:
    """The level terms of one field: each short prefix at the level of its earliest word, past 0."""
    earliest: dict[str, int] = {}
    for word, position in zip(words, positions, strict=True):
        known = earliest.get(word)
        if known is None or position < known:
            earliest[word] = position
    levels: dict[str, int] = {}
    for word, position in earliest.items():
        level = position_level(position)
        for length in SHORT_PREFIX_LENGTHS:
            prefix = word[:length]
            known = levels.get(prefix)
            if known is None or level < known:
                levels[prefix] = level
    return [level_term(prefix, level) for prefix, level in levels.items() if level]
