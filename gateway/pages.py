"""Merging the shards' pages of documents, each in sequence order, into one page of the index."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any


def merge_shard_pages(pages: Sequence[Sequence[Sequence[Any]]], offset: int, limit: int) -> list[Any]:
    """``pages[k]`` holds shard k's first ``offset + limit`` ``[sequence, document]`` pairs in order.

    Sequences are global (task uid and payload position), so the merged page is in insertion order
    whatever the shard count. The shard number breaks any tie before the documents themselves, which
    do not compare.
    """
    merged = heapq.merge(
        *[[(sequence, shard, value) for sequence, value in page] for shard, page in enumerate(pages)]
    )
    return [value for _, _, value in list(merged)[offset : offset + limit]]
