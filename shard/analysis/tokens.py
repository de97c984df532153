"""The token stream shared by query parsing, highlighting and cropping."""

from __future__ import annotations

import enum
from typing import NamedTuple

MAX_WORD_BYTES = 250
"""Longer normalised words are neither indexed nor matched (search.md §7.1)."""

MAX_POSITION = 65535
"""Positions are stored as u16, so words past this position are not produced at all."""

SOFT_GAP = 1
HARD_GAP = 8
"""Position distance across a hard separator: words in different sentences never look adjacent."""


class TokenKind(enum.Enum):
    WORD = "word"
    SOFT_SEPARATOR = "soft"
    HARD_SEPARATOR = "hard"


class Token(NamedTuple):
    """One word, or one maximal run of separators, of a text.

    ``start``/``end`` are character offsets into the analysed text, so highlighting can rebuild it
    around the original spelling. A separator's ``position`` is that of the word before it (0 if none).
    """

    kind: TokenKind
    text: str
    normalized: str
    start: int
    end: int
    position: int
    stop_word: bool
