"""Merging pages that shards return in internal document id order into one page of the index."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any


def merge_shard_pages(pages: Sequence[Sequence[Sequence[Any]]], offset: int, limit: int) -> list[Any]:
    """``pages[k]`` holds shard k's first ``offset + limit`` ``[internal id, value]`` pairs in id order.

    Ties of internal ids (each shard numbers its own documents) break on the shard number, so the
    order is stable and does not depend on reply timing.
    """
    merged = heapq.merge(
        *[[(internal_id, shard, value) for internal_id, value in page] for shard, page in enumerate(pages)]
    )
    return [value for _, _, value in list(merged)[offset : offset + limit]]
