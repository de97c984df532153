"""The filter's lexical level: whitespace, words, quoted values and their escape sequences (search.md §4.1).

Functions take the whole filter and a position and return the position after what they read, so errors
can quote the rest of the filter as the reference does. A ``Miss`` leaves other readings open; a
``FilterError`` ends parsing.
"""

from __future__ import annotations

from typing import Final

import regex

from common.filter.ast import Token
from common.filter.errors import FilterError, Miss, escape_debug, span_of, syntax_error

WHITESPACE: Final = " \t\r\n"
"""What the grammar skips between tokens (nom's ``multispace``)."""
_SPACES: Final = frozenset(WHITESPACE)

KEYWORDS: Final = frozenset(
    {"AND", "OR", "IN", "NOT", "TO", "EXISTS", "IS", "NULL", "EMPTY", "CONTAINS", "STARTS", "WITH",
     "_geoRadius", "_geoBoundingBox"}
)

_WORD: Final = regex.compile(r"[\p{Alphabetic}\p{Nd}\p{Nl}\p{No}_.\-]*")
"""Rust's ``char::is_alphanumeric`` plus ``_ - .``: what an unquoted word is made of."""
_LEADING_SPACE: Final = regex.compile(r"\p{White_Space}*")
_ERROR_WORD: Final = regex.compile(r"[^\p{White_Space}()=<>!]*")
"""The fragment a missing-value error quotes: up to the next space or operator character."""
# Unrolled (runs, then escape + run): `(?:[^']|\\.)*` kept a backtracking frame per character, so a
# quoted value of 10 MB ran out of memory.
_QUOTED: Final = {quote: regex.compile(rf"[^{quote}\\]*(?:\\.[^{quote}\\]*)*", regex.S) for quote in "'\""}
_HEX: Final = regex.compile(r"\+?[0-9a-fA-F]+")
_SIMPLE_ESCAPES: Final = {
    "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "'": "'", '"': '"', "\\": "\\", "/": "/",
}
_OCTAL: Final = frozenset("01234567")


def skip_ws(text: str, pos: int) -> int:
    if text[pos:pos + 1] not in _SPACES:
        return pos
    length = len(text)
    while pos < length and text[pos] in WHITESPACE:
        pos += 1
    return pos


def word_end(text: str, pos: int) -> int:
    """End of the unquoted word starting at ``pos`` (``pos`` itself when there is none)."""
    match = _WORD.match(text, pos)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def is_word(text: str) -> bool:
    """Whether ``text`` can be written unquoted (keywords aside)."""
    return bool(text) and word_end(text, 0) == len(text)


def read_value(text: str, pos: int) -> tuple[Token, int]:
    """``ws* (word | 'quoted' | "quoted") ws*``, geo names refused as the reference refuses them."""
    first = text[pos:pos + 1]
    start = pos if " " < first < "\x7f" else _LEADING_SPACE.match(text, pos).end()  # type: ignore[union-attr]
    end = word_end(text, start)
    word = text[start:end]
    if word[:1] == "_":
        _refuse_geo(text, start, word)
    if start < len(text) and text[start] in "'\"":
        token, end = _read_quoted(text, start)
    elif word and word not in KEYWORDS:
        token = Token(word, span_of(text, start, end))
    else:
        raise _expected_value(text, start, reserved=word in KEYWORDS)
    return token, skip_ws(text, end)


def _refuse_geo(text: str, start: int, word: str) -> None:
    for name in ("_geoPoint", "_geoDistance"):
        if text.startswith(name, start):
            raise syntax_error(text, reserved_geo(name), start)
    if word == "_geo":
        raise syntax_error(text, reserved_geo(word), start)
    if word in ("_geoRadius", "_geoBoundingBox"):
        raise syntax_error(text, f"The `{word}` filter is an operation and can't be used as a value.", start)


def reserved_geo(name: str) -> str:
    return (
        f"`{name}` is a reserved keyword and thus can't be used as a filter expression. Use the"
        " `_geoRadius(latitude, longitude, distance)` or `_geoBoundingBox([latitude, longitude], [latitude,"
        " longitude])` built-in rules to filter on `_geo` coordinates."
    )


def _expected_value(text: str, start: int, *, reserved: bool) -> Miss:
    end = _ERROR_WORD.match(text, start).end()  # type: ignore[union-attr]
    fragment = escape_debug(text[start:end])
    if start == end:
        sentence = "Was expecting a value but instead got nothing."
    elif reserved:
        sentence = (
            f"Was expecting a value but instead got `{fragment}`, which is a reserved keyword. To use"
            f" `{fragment}` as a field name or a value, surround it by quotes."
        )
    else:
        sentence = f"Was expecting a value but instead got `{fragment}`."
    return Miss(sentence, start, end, reserved=reserved)


def read_quoted_raw(text: str, start: int) -> int:
    """End of the quoted text opened at ``start`` (the closing quote's index); backslashes escape anything."""
    quote = text[start]
    end = _QUOTED[quote].match(text, start + 1).end()  # type: ignore[union-attr]
    if end < len(text) and text[end] == "\\":
        raise syntax_error(text, f"Malformed value: `{escape_debug(text[start + 1:])}`.", start + 1)
    if end == len(text):
        raise unclosed(text, start, quote)
    return end


def unclosed(text: str, start: int, delimiter: str) -> FilterError:
    """The error for a quote or parenthesis opened at ``start`` and never closed."""
    fragment = escape_debug(text[start:])
    return syntax_error(
        text, f"Expression `{fragment}` is missing the following closing delimiter: `{delimiter}`.", start
    )


def _read_quoted(text: str, start: int) -> tuple[Token, int]:
    end = read_quoted_raw(text, start)
    raw = text[start + 1:end]
    return Token(unescape(raw, start + 1) if "\\" in raw else raw, span_of(text, start + 1, end)), end + 1


def unescape(raw: str, offset: int) -> str:
    """Escape sequences as the ``unescaper`` crate reads them; ``raw`` was written at ``offset``.

    A sequence cut short (``\\u12``) makes the reference panic; here it is a malformed value.
    """
    out: list[str] = []
    index, length = 0, len(raw)
    while index < length:
        char = raw[index]
        index += 1
        if char != "\\":
            out.append(char)
            continue
        marker = raw[index] if index < length else ""
        index += 1
        if marker in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[marker])
        elif marker == "u" and raw[index:index + 1] == "{":
            close = raw.find("}", index)
            digits, index = (raw[index + 1:], length) if close < 0 else (raw[index + 1:close], close + 1)
            out.append(_code_point(raw, offset, digits))
        elif marker in ("u", "x"):
            width = 4 if marker == "u" else 2
            if index + width > length:
                raise _malformed(raw, offset)
            out.append(_code_point(raw, offset, raw[index:index + width]))
            index += width
        elif marker in _OCTAL:
            digits = marker
            while len(digits) < (3 if marker in "0123" else 2) and raw[index:index + 1] in _OCTAL:
                digits += raw[index]
                index += 1
            out.append(chr(int(digits, 8)))
        else:
            raise _malformed(raw, offset)
    return "".join(out)


def _code_point(raw: str, offset: int, digits: str) -> str:
    """A ``\\u`` or ``\\x`` number: not a u32 is an invalid number, not a character is malformed."""
    if not _HEX.fullmatch(digits) or int(digits, 16) > 0xFFFFFFFF:
        sentence = f"Found an invalid escaped sequence number: `{escape_debug(raw)}`."
        raise Miss(sentence, offset, offset + len(raw))
    value = int(digits, 16)
    if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
        raise _malformed(raw, offset)
    return chr(value)


def _malformed(raw: str, offset: int) -> Miss:
    return Miss(f"Malformed value: `{escape_debug(raw)}`.", offset, offset + len(raw))
