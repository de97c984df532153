"""``_vectors[.embedder[.userProvided|.documentTemplate|.regenerate|.fragments.<name>]] EXISTS`` (§4.1).

Once ``_vectors.`` is written the condition can only be a vector filter, so every later problem is final.
The tree keeps the path after ``_vectors`` with its parts unquoted (``.embedder.fragments.name``).
"""

from __future__ import annotations

from typing import Final

from common.filter.ast import Filter, Not, VectorsExists
from common.filter.errors import FilterError, Miss, span_of, syntax_error
from common.filter.lexer import WHITESPACE, read_quoted_raw, skip_ws, unescape, word_end

_SUFFIXES: Final = ("fragments", "userProvided", "documentTemplate", "regenerate")
_NAME: Final = "_vectors"


def parse_vectors(text: str, start: int) -> tuple[Filter, int] | None:
    """The vector filter at ``start`` (where ``_vectors`` is written), or None if this is another field."""
    pos = start + len(_NAME)
    parts: list[str] = []
    if text[pos:pos + 1] == ".":
        pos = _path(text, pos + 1, parts)
        if not _space_at(text, pos):
            raise syntax_error(text, "The vector filter has leftover tokens.", pos)
    elif not _space_at(text, pos):
        return None
    pos = skip_ws(text, pos)
    node = VectorsExists("".join(f".{part}" for part in parts), span_of(text, start, start + len(_NAME)))
    if text.startswith("EXISTS", pos):
        return node, pos + len("EXISTS")
    after_not = skip_ws(text, pos + 3)
    if text.startswith("NOT", pos) and after_not > pos + 3 and text.startswith("EXISTS", after_not):
        return Not(node), after_not + len("EXISTS")
    raise syntax_error(
        text, "Was expecting an operation like `EXISTS` or `NOT EXISTS` after the vector filter.", pos
    )


def _space_at(text: str, pos: int) -> bool:
    return pos < len(text) and text[pos] in WHITESPACE


def _path(text: str, pos: int, parts: list[str]) -> int:
    """The embedder and its optional suffix, appended to ``parts``; returns the position after them."""
    if text[pos:pos + 1] == " ":
        raise syntax_error(text, "Was expecting embedder name but found nothing.", pos, pos + 1)
    embedder, pos, _ = _part(text, pos, "The vector filter's embedder name is invalid.")
    parts.append(embedder)
    suffix: str | None = None
    while text[pos:pos + 1] == ".":
        name, end, quoted = _part(
            text,
            pos + 1,
            "Was expecting one of `.fragments`, `.userProvided`, `.documentTemplate`, `.regenerate` or"
            " nothing, but instead found a point without a valid value.",
        )
        if suffix is not None:
            raise syntax_error(
                text,
                "Vector filter can only accept one of `fragments`, `userProvided`, `documentTemplate` or"
                f" `regenerate`, but found both `{suffix}` and `{name}`.",
                pos + 1,
                end,
            )
        if quoted or name not in _SUFFIXES:
            raise syntax_error(text, _unknown_suffix(name, quoted), pos + 1, end)
        suffix = name
        parts.append(name)
        pos = end
        if name == "fragments":
            if text[pos:pos + 1] != ".":
                raise syntax_error(text, "The vector filter is missing a fragment name.", pos)
            fragment, pos, _ = _part(text, pos + 1, "The vector filter's fragment name is invalid.")
            parts.append(fragment)
    return pos


def _part(text: str, pos: int, invalid: str) -> tuple[str, int, bool]:
    """A dotted part: a quoted value or a word without dots; ``(value, end, quoted)``."""
    if text[pos:pos + 1] in ("'", '"'):
        try:
            close = read_quoted_raw(text, pos)
        except FilterError:
            raise syntax_error(text, "The quotes in one of the values are inconsistent.", pos) from None
        raw = text[pos + 1:close]
        try:
            return (unescape(raw, pos + 1) if "\\" in raw else raw), close + 1, True
        except Miss:
            raise syntax_error(text, invalid, pos) from None
    end = word_end(text, pos)
    end = pos + text[pos:end].find(".") if "." in text[pos:end] else end
    if end == pos:
        raise syntax_error(text, invalid, pos)
    return text[pos:end], end, False


def _unknown_suffix(name: str, quoted: bool) -> str:
    if quoted and name in _SUFFIXES:
        return "Was expecting this part to be unquoted."
    found = (
        "Was expecting one of `fragments`, `userProvided`, `documentTemplate`, `regenerate` or nothing,"
        f" but instead found `{name}`."
    )
    suggestion = next((suffix for suffix in _SUFFIXES if _distance(name, suffix) <= 2), None)
    return found if suggestion is None else f"{found} Did you mean `{suggestion}`?"


def _distance(first: str, second: str) -> int:
    """Damerau-Levenshtein distance (adjacent transpositions count one), as the reference's automaton."""
    previous2: list[int] = []
    previous = list(range(len(second) + 1))
    for i, char in enumerate(first, 1):
        current = [i]
        for j, other in enumerate(second, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other))
            if i > 1 and j > 1 and char == second[j - 2] and first[i - 2] == other:
                cost = min(cost, previous2[j - 2] + 1)
            current.append(cost)
        previous2, previous = previous, current
    return previous[-1]
