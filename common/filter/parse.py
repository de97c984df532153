"""Filter expressions to trees (search.md §4.1, §4.2): a recursive-descent parser over the original string.

It follows the reference's grammar choice by choice (nom parsers tried in a fixed order, some committing once
a keyword is seen), because which error a malformed filter gets, and where it points, depends on that order.
Positions are indexes into the filter; spans and messages convert them to the contract's columns.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final, TypeAlias

from common.filter.ast import (
    And,
    Between,
    Compare,
    CompareOp,
    Contains,
    Exists,
    Filter,
    Foreign,
    In,
    IsEmpty,
    IsNull,
    Not,
    Or,
    StartsWith,
    Token,
)
from common.filter.errors import FilterError, Miss, escape_debug, span_of, syntax_error
from common.filter.geo import parse_bounding_box, parse_polygon, parse_radius
from common.filter.lexer import read_value, skip_ws, unclosed, word_end
from common.filter.vectors import parse_vectors

MAX_DEPTH: Final = 150
"""Nesting allowed to the parser; each or/and/not/primary level counts one (≈ 37 parentheses)."""

_NOTHING: Final = object()
_Parsed: TypeAlias = tuple[Filter, int]
_Rule: TypeAlias = Callable[[int, int], _Parsed]

_FOREIGN: Final = "_foreign("
_COMPARISONS: Final[tuple[CompareOp, ...]] = ("<=", ">=", "!=", "<", ">", "=")
_COMPARISON_STARTS: Final = frozenset("<>!=")
_GEO: Final[dict[str, Callable[[str, int, int], _Parsed]]] = {
    "_geoRadius": parse_radius,
    "_geoBoundingBox": parse_bounding_box,
    "_geoPolygon": parse_polygon,
}
_UNARY: Final[tuple[tuple[tuple[str, ...], Callable[[Token], Filter]], ...]] = (
    (("IS", "NULL"), IsNull),
    (("IS", "NOT", "NULL"), lambda field: Not(IsNull(field))),
    (("IS", "EMPTY"), IsEmpty),
    (("IS", "NOT", "EMPTY"), lambda field: Not(IsEmpty(field))),
    (("EXISTS",), Exists),
    (("NOT", "EXISTS"), lambda field: Not(Exists(field))),
)
"""Operators without a value, as prefix tags with whitespace between their words."""
_OPERATIONS: Final = (
    "`=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, `NOT EXISTS`, `IS NULL`, `IS NOT NULL`,"
    " `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, `STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`,"
    " `_geoBoundingBox` or `_geoPolygon`"
)


def parse_filter(value: object) -> Filter | None:
    """The tree of a ``filter`` parameter (string or array form), None when it filters nothing.

    Raises ``FilterError`` for anything else, JSON of another type included; the caller picks the code.
    """
    if value is None:
        return None
    if isinstance(value, str):
        return parse_expression(value)
    if isinstance(value, list):
        return _parse_array(value)
    raise _invalid_expression("String, Array", value)


def parse_expression(text: str) -> Filter | None:
    """One filter string; blank means no filter."""
    if not text.strip():
        return None
    return _Parser(text).parse()


def _parse_array(items: list[object]) -> Filter | None:
    """Outer elements are AND-ed, an inner array's strings OR-ed; blanks are skipped.

    Element types are all checked before any string is parsed, as the reference does.
    """
    groups: list[list[str]] = []
    for item in items:
        if isinstance(item, str):
            groups.append([item])
        elif isinstance(item, list):
            wrong = next((inner for inner in item if not isinstance(inner, str)), _NOTHING)
            if wrong is not _NOTHING:
                raise _invalid_expression("String", wrong)
            groups.append(item)
        else:
            raise _invalid_expression("String, [String]", item)
    conjuncts: list[Filter] = []
    for group in groups:
        disjuncts = [node for node in map(parse_expression, group) if node is not None]
        if disjuncts:
            conjuncts.append(disjuncts[0] if len(disjuncts) == 1 else Or(tuple(disjuncts)))
    if not conjuncts:
        return None
    return conjuncts[0] if len(conjuncts) == 1 else And(tuple(conjuncts))


def _invalid_expression(expected: str, found: object) -> FilterError:
    try:
        shown = json.dumps(found, ensure_ascii=False, separators=(",", ":"), default=str)
    except RecursionError:  # only a value decoded by Python's json (a tenant token's rules) nests this deep
        shown = "an array nested too deep to show"
    return FilterError(f"Invalid syntax for the filter parameter: `expected {expected}, found: {shown}`.")


class _Parser:
    """One filter string. Methods take a position and return ``(node, position after it)``."""

    __slots__ = ("length", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)

    def parse(self) -> Filter:
        node, pos = self._or(0, 0)
        if pos < self.length:
            rest = escape_debug(self.text[pos:])
            raise syntax_error(
                self.text,
                f"Found unexpected characters at the end of the filter: `{rest}`. You probably forgot an `OR`"
                " or an `AND` rule.",
                pos,
            )
        return node

    def _keyword(self, pos: int, keyword: str) -> int:
        """Position after ``ws* keyword ws*`` (a whole word), or -1."""
        start = skip_ws(self.text, pos)
        if not self.text.startswith(keyword, start):
            return -1
        end = word_end(self.text, start)
        return skip_ws(self.text, end) if end - start == len(keyword) else -1

    def _check_depth(self, pos: int, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise syntax_error(
                self.text,
                "The filter exceeded the maximum depth limit. Try rewriting the filter so that it contains"
                " fewer nested conditions.",
                pos,
            )

    def _or(self, pos: int, depth: int) -> _Parsed:
        return self._chain(pos, depth, "OR", self._and, Or)

    def _and(self, pos: int, depth: int) -> _Parsed:
        return self._chain(pos, depth, "AND", self._not, And)

    def _chain(
        self, pos: int, depth: int, keyword: str, operand: _Rule, node: type[And] | type[Or]
    ) -> _Parsed:
        """``operand (keyword operand)*``; a keyword commits to the operand after it."""
        self._check_depth(pos, depth)
        first, pos = operand(pos, depth + 1)
        children = [first]
        while (after := self._keyword(pos, keyword)) >= 0:
            child, pos = operand(after, depth + 1)
            children.append(child)
        return (first if len(children) == 1 else node(tuple(children))), pos

    def _not(self, pos: int, depth: int) -> _Parsed:
        """``NOT not | primary``; ``NOT NOT x`` is ``x``."""
        self._check_depth(pos, depth)
        after = self._keyword(pos, "NOT")
        if after < 0:
            return self._primary(pos, depth + 1)
        child, end = self._not(after, depth + 1)
        return (child.child if isinstance(child, Not) else Not(child)), end

    def _primary(self, pos: int, depth: int) -> _Parsed:
        self._check_depth(pos, depth)
        text = self.text
        start = skip_ws(text, pos)
        if text[start:start + 1] == "(":
            inner, end = self._or(skip_ws(text, start + 1), depth + 1)
            end = skip_ws(text, end)
            if text[end:end + 1] != ")":
                raise unclosed(text, pos, ")")
            return inner, skip_ws(text, end + 1)
        if text[start:start + 1] == "_":
            word_stop = word_end(text, start)
            geo = _GEO.get(text[start:word_stop])
            if geo is not None:
                return geo(text, pos, word_stop)
            vectors = parse_vectors(text, start) if text.startswith("_vectors", start) else None
            if vectors is not None:
                return vectors
            if text.startswith(_FOREIGN, start):
                return self._foreign(start, depth + 1)
        try:
            field, after = read_value(text, pos)
        except Miss as miss:
            if miss.reserved:
                raise syntax_error(text, miss.sentence, miss.start, miss.end) from None
            raise self._invalid_primary(pos) from None
        condition = self._condition(field, after)
        if condition is None:
            raise self._invalid_primary(pos)
        return condition

    def _foreign(self, start: int, depth: int) -> _Parsed:
        """``_foreign( field , expression )`` at ``start``, all committed."""
        text = self.text
        pos = start + len(_FOREIGN)
        try:
            field, after = read_value(text, pos)
        except Miss:
            raise self._bad_foreign(pos) from None
        if text[after:after + 1] != ",":
            raise self._bad_foreign(after)
        inner_start = skip_ws(text, after + 1)
        try:
            condition, end = self._or(inner_start, depth + 1)
        except FilterError:
            raise self._bad_foreign(self.length, found="") from None
        end = skip_ws(text, end)
        if text[end:end + 1] != ")":
            raise self._bad_foreign(end)
        blank = "".join(char if char == "\n" else " " for char in text[:inner_start])
        node = Foreign(field, condition, blank + text[inner_start:end], start, end + 1)
        return node, skip_ws(text, end + 1)

    def _bad_foreign(self, pos: int, found: str | None = None) -> FilterError:
        rest = escape_debug(self.text[pos:]) if found is None else found
        return syntax_error(
            self.text,
            "Was expecting a field name and an condition inside `_foreign(..)` filter but instead found"
            f" `{rest}`.",
            pos,
            self.length,
        )

    def _invalid_primary(self, pos: int) -> FilterError:
        fragment = self.text[pos:]
        found = f"at `{escape_debug(fragment)}`." if fragment.strip() else "but instead got nothing."
        return syntax_error(self.text, f"Was expecting an operation {_OPERATIONS} {found}", pos)

    def _condition(self, field: Token, pos: int) -> _Parsed | None:
        """What follows a field, in the reference's order of attempts; None when nothing fits."""
        text = self.text
        first = text[pos:pos + 1]
        if first in _COMPARISON_STARTS:
            for op in _COMPARISONS:
                if text.startswith(op, pos):
                    value, end = self._value(pos + len(op))
                    return Compare(field, op, value), end
        after_in = self._keyword(pos, "IN") if first == "I" else -1
        if after_in >= 0:
            return self._in(field, after_in)
        after_not = self._keyword(pos, "NOT") if first == "N" else -1
        after_in = self._keyword(after_not, "IN") if after_not >= 0 else -1
        if after_in >= 0:
            node, end = self._in(field, after_in)
            return Not(node), end
        for words, make in _UNARY:
            end = self._words(pos, words)
            if end >= 0:
                return make(field), end
        between = self._between(field, pos)
        if between is not None:
            return between
        return self._text_match(field, pos)

    def _text_match(self, field: Token, pos: int) -> _Parsed | None:
        """``[NOT] CONTAINS v`` and ``[NOT] STARTS WITH v``."""
        for keyword in ("CONTAINS", "STARTS WITH"):
            for words in ((keyword,), ("NOT", keyword)):
                after = self._words(pos, words)
                if after < 0:
                    continue
                value, end = self._value(after)
                node: Filter = (
                    Contains(field, value, span_of(self.text, after - len(keyword), after))
                    if keyword == "CONTAINS"
                    else StartsWith(field, value)
                )
                return (Not(node) if len(words) == 2 else node), end
        return None

    def _words(self, pos: int, words: tuple[str, ...]) -> int:
        """Position after ``words`` written with whitespace between them (prefix tags, as the reference)."""
        for index, word in enumerate(words):
            if index:
                after = skip_ws(self.text, pos)
                if after == pos:
                    return -1
                pos = after
            if not self.text.startswith(word, pos):
                return -1
            pos += len(word)
        return pos

    def _between(self, field: Token, pos: int) -> _Parsed | None:
        """``field low TO high``: only ``TO`` and what follows it are committed."""
        try:
            low, after = read_value(self.text, pos)
        except Miss:
            return None
        end = self._words(after, ("TO",))
        if end < 0 or skip_ws(self.text, end) == end:
            return None
        high, end = self._value(end)
        return Between(field, low, high), end

    def _value(self, pos: int) -> tuple[Token, int]:
        """A value the grammar requires: a miss is final."""
        try:
            return read_value(self.text, pos)
        except Miss as miss:
            raise syntax_error(self.text, miss.sentence, miss.start, miss.end) from None

    def _in(self, field: Token, pos: int) -> _Parsed:
        """After ``IN``: ``[v, ...]`` with an optional trailing comma; everything here is committed."""
        text = self.text
        pos = skip_ws(text, pos)
        if text[pos:pos + 1] != "[":
            raise syntax_error(text, "Expected `[` after `IN` keyword.", pos)
        values: list[Token] = []
        pos += 1
        try:
            value, pos = read_value(text, pos)
            values.append(value)
            while True:
                comma = skip_ws(text, pos)
                if text[comma:comma + 1] != ",":
                    break
                value, pos = read_value(text, skip_ws(text, comma + 1))
                values.append(value)
        except Miss:
            pass
        comma = skip_ws(text, pos)
        if values and text[comma:comma + 1] == ",":
            pos = skip_ws(text, comma + 1)
        close = skip_ws(text, pos)
        if text[close:close + 1] == "]":
            return In(field, tuple(values)), skip_ws(text, close + 1)
        if pos == self.length:
            sentence = "Expected matching `]` after the list of field names given to `IN[`"
        else:
            found = escape_debug(text[pos:])
            sentence = (
                f"Expected only comma-separated field names inside `IN[..]` but instead found `{found}`."
            )
        raise syntax_error(text, sentence, pos)
