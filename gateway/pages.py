"""Merging the shards' pages of documents (GET /documents, POST /documents/fetch) into one page."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from gateway.search.order import merge_order


def merge_shard_pages(pages: Sequence[Sequence[Sequence[Any]]], offset: int, limit: int) -> list[Any]:
    """``pages[k]`` holds shard k's first ``offset + limit`` ``[sequence, key, document]`` in order.

    The key holds the ``sort`` values as a search hit's does (``order.py``; empty without ``sort``), and
    sequences are global (task uid and payload position), so the merged page is what one shard holding
    every document would give. The shard number breaks any tie before the documents themselves, which
    do not compare.
    """
    merged = heapq.merge(
        *[
            [(merge_order(key), sequence, shard, value) for sequence, key, value in page]
            for shard, page in enumerate(pages)
        ]
    )
    return [entry[-1] for entry in list(merged)[offset : offset + limit]]
