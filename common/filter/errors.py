"""Filter errors and their wire format: ``<sentence>\\n<start>:<end> <original filter>`` (search.md §4.5).

The reference prints the offending fragment with Rust's ``str::escape_debug`` and counts columns in
characters from the start of the fragment's line, so both are reproduced here to keep messages identical.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from typing import Final

from common.errors import ParameterError
from common.filter.ast import Span

_ESCAPES: Final = {"\0": "\\0", "\t": "\\t", "\r": "\\r", "\n": "\\n", "\\": "\\\\", '"': '\\"', "'": "\\'"}
_EXTENDING: Final = frozenset({"Mn", "Me"})
_NEWLINE: Final = re.compile("\n")


class FilterError(ParameterError):
    """A filter the API refuses; the message is final, the route picks the code."""


class Miss(Exception):
    """A recoverable parse failure (an alternative may still match); it becomes a FilterError when none does.

    ``reserved`` marks a keyword written where a value was expected, which ends parsing even where other
    misses would only say that no operation was recognised.
    """

    def __init__(self, sentence: str, start: int, end: int, *, reserved: bool = False) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.start = start
        self.end = end
        self.reserved = reserved


def escape_debug(text: str) -> str:
    """Rust's ``str::escape_debug``: quotes, backslashes and unprintable characters escaped.

    Rust also escapes a grapheme-extending first character; combining marks approximate that property.
    """
    out = []
    for index, char in enumerate(text):
        escaped = _ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif not char.isprintable() or (index == 0 and unicodedata.category(char) in _EXTENDING):
            out.append(f"\\u{{{ord(char):x}}}")
        else:
            out.append(char)
    return "".join(out)


def column(text: str, index: int) -> int:
    """1-based character column of ``text[index]`` within its line, as the reference counts it."""
    starts = _line_starts(text)
    return index - starts[bisect.bisect_right(starts, index - 1) - 1]


@functools.lru_cache(maxsize=16)
def _line_starts(text: str) -> list[int]:
    """-1 and the index of every newline: each token's column is then a bisection, where a search back
    to the previous newline made a filter of 10^5 values on one line quadratic (6 s)."""
    return [-1, *(match.start() for match in _NEWLINE.finditer(text))]


def span_of(text: str, start: int, end: int) -> Span:
    """The contract span of ``text[start:end]``, remembering the text it came from for later messages."""
    first = column(text, start)
    return Span(first, first + end - start, text)


def located(sentence: str, span: Span) -> str:
    """A message with its position line."""
    return f"{sentence}\n{span.start}:{span.end} {span.source}"


def syntax_error(text: str, sentence: str, start: int, end: int | None = None) -> FilterError:
    """The error for ``text[start:end]`` (to the end of the filter when ``end`` is omitted)."""
    return FilterError(located(sentence, span_of(text, start, len(text) if end is None else end)))
