"""Wording shared by body and query validation: value kinds, found values and "did you mean" hints.

Clients and users compare these strings with Meilisearch's (deserr) output, so the phrasing, the kind order
and the typo thresholds follow core.md §1.10 exactly.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence

import orjson


class Kind(enum.Flag):
    """JSON value kinds; combine with ``|``. Member order is the order deserr lists them in messages."""

    NULL = enum.auto()
    BOOLEAN = enum.auto()
    POSITIVE_INTEGER = enum.auto()
    NEGATIVE_INTEGER = enum.auto()
    NUMBER = enum.auto()
    STRING = enum.auto()
    ARRAY = enum.auto()
    OBJECT = enum.auto()
    INTEGER = POSITIVE_INTEGER | NEGATIVE_INTEGER
    ANY = NULL | BOOLEAN | INTEGER | NUMBER | STRING | ARRAY | OBJECT


_ARTICLED = {
    Kind.NULL: "null",
    Kind.BOOLEAN: "a boolean",
    Kind.POSITIVE_INTEGER: "a positive integer",
    Kind.NEGATIVE_INTEGER: "a negative integer",
    Kind.NUMBER: "a number",
    Kind.STRING: "a string",
    Kind.ARRAY: "an array",
    Kind.OBJECT: "an object",
}


def kind_of(value: object) -> Kind:
    """The kind of a decoded JSON value (``bool`` is checked first: it is an ``int`` in Python)."""
    if value is None:
        return Kind.NULL
    if isinstance(value, bool):
        return Kind.BOOLEAN
    if isinstance(value, int):
        return Kind.POSITIVE_INTEGER if value >= 0 else Kind.NEGATIVE_INTEGER
    if isinstance(value, float):
        return Kind.NUMBER
    if isinstance(value, str):
        return Kind.STRING
    if isinstance(value, list):
        return Kind.ARRAY
    if isinstance(value, dict):
        return Kind.OBJECT
    raise TypeError(f"not a decoded JSON value: {type(value).__name__}")


def accepts(kinds: Kind, value: object) -> bool:
    """Whether ``value`` has one of ``kinds``; like a float field in deserr, NUMBER also takes integers."""
    kind = kind_of(value)
    return bool(kind & kinds) or (Kind.NUMBER in kinds and kind in Kind.INTEGER)


def describe_kinds(kinds: Kind) -> str:
    """E.g. `a string`, `a string or null`... in deserr's order, pairing integer kinds as deserr does."""
    members = [kind for kind in _ARTICLED if kind in kinds]
    parts: list[str] = []
    while members:
        head = members[0]
        second = members[1] if len(members) > 1 else None
        if head in Kind.INTEGER and second is Kind.NUMBER:
            parts.append("a number")
            del members[:2]
        elif head is Kind.POSITIVE_INTEGER and second is Kind.NEGATIVE_INTEGER:
            parts.append("an integer")
            del members[:2]
        else:
            parts.append(_ARTICLED[head])
            del members[0]
    if len(parts) <= 2:
        return " or ".join(parts)
    return ", ".join(parts[:-1]) + ", or " + parts[-1]


def describe_found(value: object) -> str:
    """``null`` bare, anything else as its kind followed by its compact JSON in backticks."""
    if value is None:
        return "null"
    return f"{describe_kinds(kind_of(value))}: `{orjson.dumps(value).decode()}`"


def ticked(values: Iterable[str]) -> str:
    return ", ".join(f"`{value}`" for value in values)


def damerau_levenshtein(a: str, b: str) -> int:
    """Unrestricted Damerau-Levenshtein distance (Lowrance-Wagner), as the strsim crate computes it."""
    infinity = len(a) + len(b)
    # Row/column 0 hold the sentinel; row/column 1 the distances to the empty prefix.
    table = [[infinity] * (len(b) + 2) for _ in range(len(a) + 2)]
    for i in range(len(a) + 1):
        table[i + 1][1] = i
    for j in range(len(b) + 1):
        table[1][j + 1] = j
    last_row_of: dict[str, int] = {}
    for i in range(1, len(a) + 1):
        last_match_col = 0
        for j in range(1, len(b) + 1):
            k = last_row_of.get(b[j - 1], 0)
            m = last_match_col
            cost = 1
            if a[i - 1] == b[j - 1]:
                cost = 0
                last_match_col = j
            table[i + 1][j + 1] = min(
                table[i][j] + cost,
                table[i + 1][j] + 1,
                table[i][j + 1] + 1,
                table[k][m] + (i - k - 1) + 1 + (j - m - 1),
            )
        last_row_of[a[i - 1]] = i
    return table[len(a) + 1][len(b) + 1]


def _typo_budget(byte_length: int) -> int:
    if byte_length <= 7:
        return 1
    if byte_length <= 12:
        return 2
    if byte_length <= 17:
        return 3
    if byte_length <= 24:
        return 4
    return 5


def did_you_mean(received: str, accepted: Sequence[str]) -> str:
    """`did you mean `x`? ` (trailing space included) for the closest accepted name, or an empty string.

    Lengths are counted in UTF-8 bytes, like Rust's ``str::len``; names of 3 bytes or fewer never get a hint.
    The first of several equally close names wins.
    """
    byte_length = len(received.encode())
    if byte_length <= 3:
        return ""
    budget = _typo_budget(byte_length)
    best: tuple[int, str] | None = None
    for name in accepted:
        distance = damerau_levenshtein(received, name)
        if distance <= budget and (best is None or distance < best[0]):
            best = (distance, name)
    return "" if best is None else f"did you mean `{best[1]}`? "
