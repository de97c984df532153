"""The merge order of shard hits: their keys compared the way one shard's bucket sort ordered them.

A key holds, rule by rule, relevancy local scores (higher first) and, for sort rules,
``[ascending, value]`` where the value is a number, a normalised string or None (search.md §5: numbers
before strings in both directions, missing values last). ``merge_order`` turns a key into a tuple whose
ascending order is best-first, so ``heapq.merge`` can interleave the shards' pages.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import total_ordering
from typing import Any

_NUMBER, _STRING, _MISSING = 0, 1, 2


@total_ordering
class _Descending:
    """A string that sorts in reverse."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Descending) and self.text == other.text

    def __lt__(self, other: _Descending) -> bool:
        return other.text < self.text

    def __hash__(self) -> int:
        return hash(self.text)


def merge_order(key: Sequence[Any]) -> tuple[tuple[Any, ...], ...]:
    return tuple(_item(item) for item in key)


def _item(item: Any) -> tuple[Any, ...]:
    if not isinstance(item, list):
        return (_NUMBER, -item)
    return sort_value_order(item)


def sort_value_order(item: Sequence[Any]) -> tuple[Any, ...]:
    """``[ascending, value]`` of a sort rule as a tuple whose ascending order is best-first; only values
    sorted in the same direction compare."""
    ascending, value = item
    if value is None:
        return (_MISSING, 0)
    if isinstance(value, str):
        return (_STRING, value if ascending else _Descending(value))
    return (_NUMBER, value if ascending else -value)
