"""Distinct across shards (search.md §1.8): shards leave out only the documents they can prove
excluded (``shard/query/distinct.py``); documents sharing a value on different shards meet only here.

Walking the merged hits best first, a hit is kept unless it shares a value with a kept hit, which is
what one shard holding every document does. The walk is settled up to the last hit of any shard that
sent a full page: past it, that shard may hold documents it did not send. When fewer hits than the
page needs are settled, the runner asks the shards again for ``DISTINCT_GROWTH`` times as many; then
it asks them to count the candidates the page's values leave.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeVar

DISTINCT_GROWTH = 4
"""A round costs the shards about the same whatever the page size (ranking up to the last hit
dominates, not formatting the hits), so a short page asks for many more at once: on movies with
distinct ``genres``, shards send 35-55 hits before running out, which doubling from 20 reaches in
three rounds and this in two."""


class Distinguished(Protocol):
    @property
    def distinct(self) -> list[list[Any]] | None: ...


Hit = TypeVar("Hit", bound=Distinguished)


def deduplicate(
    merged: Iterable[Hit], pages: Sequence[Sequence[Hit]], full: int, wanted: int
) -> tuple[list[Hit], bool]:
    """The first ``wanted`` hits no better hit shares a value with, and whether they are settled.

    ``merged``: the shards' ``pages`` merged best first; a page of ``full`` hits may have more behind it.
    """
    kept: list[Hit] = []
    if wanted <= 0:
        return kept, True
    page_ends = {id(page[-1]) for page in pages if page and len(page) >= full}
    seen: set[tuple[int, Any]] = set()
    for hit in merged:
        values = [(kind, value) for kind, value in hit.distinct or ()]
        if not any(value in seen for value in values):
            seen.update(values)
            kept.append(hit)
            if len(kept) == wanted:
                return kept, True
        if id(hit) in page_ends:
            return kept, False
    return kept, True
