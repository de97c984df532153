"""Distinct across shards (search.md §1.8): shards deduplicate their own hits; documents sharing a value
on different shards meet only here.

Walking the merged hits best first, a hit is kept unless it shares a value with a kept hit, which is
what one shard holding every document does. When that leaves fewer hits than the page needs while a
shard may hold more, the runner asks the shards again for twice as many.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, TypeVar


class Distinguished(Protocol):
    @property
    def distinct(self) -> list[list[Any]] | None: ...


Hit = TypeVar("Hit", bound=Distinguished)


def deduplicate(merged: Iterable[Hit]) -> tuple[list[Hit], int]:
    """The hits kept, and how many were dropped."""
    seen: set[tuple[int, Any]] = set()
    kept: list[Hit] = []
    dropped = 0
    for hit in merged:
        values = [(kind, value) for kind, value in hit.distinct or ()]
        if any(value in seen for value in values):
            dropped += 1
            continue
        seen.update(values)
        kept.append(hit)
    return kept, dropped
