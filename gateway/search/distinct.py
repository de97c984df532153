"""Distinct across shards (search.md §1.8): shards deduplicate their own hits; documents sharing a value
on different shards meet only here.

Walking the merged hits best first, a hit is kept unless it shares a value with a kept hit, which is
what one shard holding every document does. When that leaves fewer hits than the page needs while a
shard may hold more, the runner asks the shards again for twice as many; then it asks them to count
the candidates the page's values leave.

A shard deduplicates with its own hits only: when the gateway drops one of them for a value it shares
with another shard's better hit, the documents that hit excluded through its other values (arrays)
are missing from that shard's answer. The runner then asks again with the dropped hit skipped, until
no such hit precedes the page's end.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, TypeVar


class Distinguished(Protocol):
    @property
    def distinct(self) -> list[list[Any]] | None: ...


Hit = TypeVar("Hit", bound=Distinguished)


def deduplicate(merged: Iterable[Hit], wanted: int) -> tuple[list[Hit], Hit | None]:
    """The hits no better hit shares a value with, and the first dropped hit (before ``wanted`` are
    kept) having a value no kept hit has: its shard excluded documents through that value, wrongly,
    so its answer past that hit cannot be trusted."""
    seen: set[tuple[int, Any]] = set()
    kept: list[Hit] = []
    for hit in merged:
        values = [(kind, value) for kind, value in hit.distinct or ()]
        if not any(value in seen for value in values):
            seen.update(values)
            kept.append(hit)
        elif len(kept) < wanted and not all(value in seen for value in values):
            return kept, hit
    return kept, None
