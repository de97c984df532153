"""Facet values of a document (search.md §4.3): every leaf of a faceted field, numbers and strings.

Array elements count individually and nested objects are flattened into dotted paths. A field is
``null`` or ``empty`` only when its own value is (``null``; ``""``, ``[]``, ``{}``): a null inside an
array makes the field exist, nothing more. Strings are normalised (trimmed, NFKD, lowercased) and keep
the document's first spelling of each (facet distributions show one); booleans are the strings
``true``/``false``, numbers are floats (non-finite ones are dropped).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from shard.index.facet_rules import FieldSelection

# Rust's f64 grammar, which decides whether a filter operand is also a number: no underscores or
# surrounding spaces, unlike Python's float().
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)", re.IGNORECASE)


def normalize_facet(text: str) -> str:
    return unicodedata.normalize("NFKD", text.strip()).lower()


def facet_number(text: str) -> float | None:
    """The operand as a number when it is written as one and finite."""
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


@dataclass
class FieldFacets:
    numbers: set[float] = field(default_factory=set)
    strings: dict[str, str] = field(default_factory=dict)
    """Normalised value -> the document's first original spelling of it."""
    null: bool = False
    empty: bool = False


def document_facets(document: dict[str, Any], fields: FieldSelection) -> dict[str, FieldFacets]:
    """Facet values of the selected fields, by dotted path; a selected path present is a key."""
    found: dict[str, FieldFacets] = {}
    for name, value in document.items():
        _visit(found, fields, name, value, own=True)
    return found


def _visit(
    found: dict[str, FieldFacets], fields: FieldSelection, path: str, value: Any, *, own: bool
) -> None:
    """``own``: ``value`` is the field's value itself, not an element of an array."""
    if fields.selects(path):
        _leaf(found.setdefault(path, FieldFacets()), value, own)
    if isinstance(value, list):
        for item in value:
            _visit(found, fields, path, item, own=False)
    elif isinstance(value, dict) and fields.may_select_below(path):
        for name, item in value.items():
            _visit(found, fields, f"{path}.{name}", item, own=own)


def _leaf(facets: FieldFacets, value: Any, own: bool) -> None:
    if isinstance(value, str):
        if value:
            facets.strings.setdefault(normalize_facet(value), value)
        elif own:
            facets.empty = True
    elif isinstance(value, bool):
        text = "true" if value else "false"
        facets.strings.setdefault(text, text)
    elif isinstance(value, int | float):
        number = _finite(value)
        if number is not None:
            facets.numbers.add(number)
    elif value is None:
        facets.null = facets.null or own
    elif not value and own:
        facets.empty = True


def _finite(value: int | float) -> float | None:
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None
