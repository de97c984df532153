"""A plain-Python reference for filter semantics (search.md §4.3), evaluated on the documents themselves.

Written from the contract, independently of the engine's facet storage: each document is flattened
into (dotted path, value, whether the value is the field's own value or an array element) and every
operator is checked against those leaves directly. Property tests compare the engine's answers to it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from common.filter.ast import (
    And,
    Between,
    Compare,
    Contains,
    Exists,
    Filter,
    In,
    IsEmpty,
    IsNull,
    Not,
    Or,
    StartsWith,
    Token,
)

_FLOAT = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKD", text.strip()).lower()


def _number(text: str) -> float | None:
    """Operands written as a finite decimal number (Rust's float syntax, no infinities)."""
    if _FLOAT.fullmatch(text) is None:
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _leaves(value: Any, path: str, own: bool) -> Iterator[tuple[str, Any, bool]]:
    yield path, value, own
    if isinstance(value, list):
        for item in value:
            yield from _leaves(item, path, False)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}", own)


def field_leaves(document: dict[str, Any], field: str) -> list[tuple[Any, bool]]:
    """Every value found at ``field`` (array elements and nested objects included)."""
    return [
        (value, own)
        for key, top in document.items()
        for path, value, own in _leaves(top, key, True)
        if path == field
    ]


def _strings(leaves: list[tuple[Any, bool]]) -> set[str]:
    found = set()
    for value, _ in leaves:
        if isinstance(value, bool):
            found.add("true" if value else "false")
        elif isinstance(value, str) and value:
            found.add(_norm(value))
    return found


def _numbers(leaves: list[tuple[Any, bool]]) -> set[float]:
    return {
        float(value)
        for value, _ in leaves
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(float(value))
    }


def matches(document: dict[str, Any], node: Filter) -> bool:
    if isinstance(node, And):
        return all(matches(document, child) for child in node.children)
    if isinstance(node, Or):
        return any(matches(document, child) for child in node.children)
    if isinstance(node, Not):
        return not matches(document, node.child)
    if isinstance(node, In):
        return any(_equal(document, node.field, value) for value in node.values)
    if isinstance(node, Compare):
        if node.op == "=":
            return _equal(document, node.field, node.value)
        if node.op == "!=":
            return not _equal(document, node.field, node.value)
        return _compare(document, node.field, node.op, node.value)
    if isinstance(node, Between):
        leaves = field_leaves(document, node.field.text)
        low, high = _norm(node.low.text), _norm(node.high.text)
        if any(low <= text <= high for text in _strings(leaves)):
            return True
        low_n, high_n = _number(node.low.text), _number(node.high.text)
        if low_n is None or high_n is None:
            return False
        return any(low_n <= number <= high_n for number in _numbers(leaves))
    leaves = field_leaves(document, node.field.text) if hasattr(node, "field") else []
    if isinstance(node, Exists):
        return bool(leaves)
    if isinstance(node, IsNull):
        return any(value is None and own for value, own in leaves)
    if isinstance(node, IsEmpty):
        return any(own and value in ("", [], {}) for value, own in leaves)
    if isinstance(node, Contains):
        return any(_norm(node.value.text) in text for text in _strings(leaves))
    if isinstance(node, StartsWith):
        prefix = _norm(node.value.text)
        if not prefix:
            return bool(leaves)
        return any(text.startswith(prefix) for text in _strings(leaves))
    raise TypeError(f"the reference has no semantics for {node!r}")


def _equal(document: dict[str, Any], field: Token, value: Token) -> bool:
    leaves = field_leaves(document, field.text)
    if _norm(value.text) in _strings(leaves):
        return True
    number = _number(value.text)
    return number is not None and number in _numbers(leaves)


def _compare(document: dict[str, Any], field: Token, op: str, value: Token) -> bool:
    leaves = field_leaves(document, field.text)
    checks = {
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
    }
    check = checks[op]
    text = _norm(value.text)
    if any(check(candidate, text) for candidate in _strings(leaves)):
        return True
    number = _number(value.text)
    return number is not None and any(check(candidate, number) for candidate in _numbers(leaves))


def reference_ids(documents: list[dict[str, Any]], node: Filter, key: str = "id") -> list[Any]:
    return sorted(document[key] for document in documents if matches(document, node))
