"""Facet expectations computed from documents (search.md §1.7), shared by the facet integration tests."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator
from typing import Any


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKD", text.strip()).lower()


_FOLDED_LETTERS = str.maketrans({"æ": "ae", "œ": "oe"})


def search_form(text: str) -> str:
    """Facet search's form of a Latin, Greek or kana value (search.md §3.1): case folded, compatibility
    decomposed, Latin/Greek diacritics dropped, letters without a decomposition spelled out, as the
    analyser normalises searchable words (``ß`` and ``ø`` stay, as on the reference engine)."""
    decomposed = unicodedata.normalize("NFKD", "ß".join(part.casefold() for part in text.strip().split("ß")))
    bare = "".join(char for char in decomposed if not 0x300 <= ord(char) <= 0x36F)
    return unicodedata.normalize("NFC", bare.translate(_FOLDED_LETTERS))


def number_key(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, list):
        for item in value:
            yield from leaves(item)
    else:
        yield value


def field_value(doc: dict[str, Any], path: str) -> Any:
    value: Any = doc
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def expected_facets(
    docs: list[dict[str, Any]], field: str, limit: int = 100, order: str = "alpha"
) -> tuple[dict[str, int], dict[str, float] | None]:
    """The §1.7 distribution and stats of ``field`` over ``docs`` (in insertion order)."""
    numbers: dict[float, int] = {}
    strings: dict[str, list[Any]] = {}
    for doc in docs:
        seen_numbers, seen_strings = set(), set()
        for leaf in leaves(field_value(doc, field)):
            if isinstance(leaf, bool):
                leaf = "true" if leaf else "false"
            if isinstance(leaf, int | float):
                seen_numbers.add(float(leaf))
            elif isinstance(leaf, str) and leaf:
                key = normalise(leaf)
                if key not in seen_strings:
                    seen_strings.add(key)
                    strings.setdefault(key, [0, leaf])[0] += 1
        for number in seen_numbers:
            numbers[number] = numbers.get(number, 0) + 1
    if order == "count":
        number_items = sorted(numbers.items(), key=lambda item: (-item[1], item[0]))
        string_items = sorted(strings.items(), key=lambda item: (-item[1][0], item[0]))
    else:
        number_items = sorted(numbers.items())
        if len(docs) <= 3000:
            number_items.sort(key=lambda item: number_key(item[0]))
        string_items = sorted(strings.items())
    shown = {number_key(value): count for value, count in number_items[:limit]}
    for _, (count, spelling) in string_items[: max(limit - len(shown), 0)]:
        shown[spelling] = count
    stats = {"min": min(numbers), "max": max(numbers)} if numbers else None
    return shown, stats


def expected_hits(
    docs: list[dict[str, Any]], field: str, keep: Callable[[str], bool], limit: int = 100
) -> list[dict[str, Any]]:
    """Facet-search hits over ``docs``: the string values whose search form ``keep`` accepts, in the
    distribution's order and spelling."""
    shown, _ = expected_facets(docs, field, 10_000)
    hits = [{"value": value, "count": count} for value, count in shown.items() if keep(search_form(value))]
    return hits[:limit]
