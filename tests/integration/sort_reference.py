"""The contract's sort order (search.md §5) and geo distances, computed in plain Python for tests.

Tests compare the engine's order with these, never with its own earlier answers.
"""

from __future__ import annotations

import math
import random
import unicodedata
from collections.abc import Sequence
from typing import Any

EARTH_RADIUS = 6_371_000.0

Criterion = tuple[str, bool]
"""(field, ascending)."""

BRANDS = ["Acme", "acme", "Zeta", "Éclair", "beta", "10", "9"]


def add_price_and_brand(rng: random.Random, doc: dict[str, Any]) -> None:
    """Values that exercise §5's order: ``price`` an integer or float, a numeric string, an array or
    missing; ``brand`` strings differing in case and accents, numeric strings, or missing."""
    kind = rng.random()
    if kind < 0.55:
        doc["price"] = rng.choice([rng.randint(-5, 50), round(rng.uniform(0, 50), 2)])
    elif kind < 0.7:
        doc["price"] = str(rng.randint(0, 99))
    elif kind < 0.85:
        doc["price"] = [rng.randint(0, 60), rng.randint(0, 60)]
    if rng.random() < 0.8:
        doc["brand"] = rng.choice(BRANDS)


def facet_values(doc: dict[str, Any], field: str) -> list[float | str]:
    """The field's sortable values: numbers as floats, strings trimmed + NFKD + lowercased."""
    value = doc.get(field)
    items = value if isinstance(value, list) else [] if value is None else [value]
    found: list[float | str] = []
    for item in items:
        if isinstance(item, bool):
            found.append(str(item).lower())
        elif isinstance(item, int | float):
            found.append(float(item))
        elif isinstance(item, str) and item:
            found.append(unicodedata.normalize("NFKD", item.strip()).lower())
    return found


def sort_key(doc: dict[str, Any], field: str, ascending: bool) -> tuple[Any, ...]:
    """§5: numbers before strings in both directions, a document at its best value, missing last."""
    values = facet_values(doc, field)
    numbers = [v for v in values if isinstance(v, float)]
    strings = [v for v in values if isinstance(v, str)]
    if numbers:
        best = min(numbers) if ascending else max(numbers)
        return (0, best if ascending else -best)
    if strings:
        text = min(strings) if ascending else max(strings)
        return (1, text if ascending else (*(-ord(c) for c in text), 1))
    return (2,)


def sorted_ids(docs: Sequence[dict[str, Any]], criteria: Sequence[Criterion]) -> list[Any]:
    """Ids of ``docs`` in ``criteria`` order, ties in list (insertion) order."""
    return [doc["id"] for doc in sorted(docs, key=lambda d: [sort_key(d, f, a) for f, a in criteria])]


def haversine(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lng1, lat2, lng2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    return 2 * EARTH_RADIUS * math.asin(math.sqrt(h))


def point(doc: dict[str, Any]) -> tuple[float, float] | None:
    geo = doc.get("_geo")
    return None if geo is None else (float(geo["lat"]), float(geo["lng"]))
