"""Selecting attributes of a document by name or dotted path (``doggo`` or ``doggo.name``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final


def select_attributes(document: dict[str, Any], selectors: Sequence[str]) -> dict[str, Any]:
    """The document restricted to ``selectors``, keeping its field order.

    A name selects the whole value under it; a dotted path selects inside objects, and inside arrays
    of objects, only the named sub-fields.
    """
    selected: dict[str, Any] = {}
    for key, value in document.items():
        if key in selectors:
            selected[key] = value
            continue
        nested = [selector[len(key) + 1 :] for selector in selectors if selector.startswith(key + ".")]
        if not nested:
            continue
        if isinstance(value, dict):
            inner = select_attributes(value, nested)
            if inner:
                selected[key] = inner
        elif isinstance(value, list):
            items = [select_attributes(item, nested) for item in value if isinstance(item, dict)]
            if any(items):
                selected[key] = [item for item in items if item]
    return selected


VECTORS: Final = "_vectors"
"""The reserved field of a document's embeddings: never an ordinary field, shown only with
``retrieveVectors`` after the document's other fields (search.md §1.6, core.md §3.3)."""


def vectors_field(document: Mapping[str, Any]) -> dict[str, Any]:
    """The document's ``_vectors`` map of embedders (``{}`` when it has none)."""
    vectors = document.get(VECTORS)
    return vectors if isinstance(vectors, dict) else {}


def without_vectors(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` without ``_vectors`` (itself when it has none, as most documents)."""
    if VECTORS not in document:
        return document
    return {key: value for key, value in document.items() if key != VECTORS}
