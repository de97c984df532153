"""``pagination.maxTotalHits`` (search.md §1.5): no hit past that number is ever reachable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

DEFAULT_MAX_TOTAL_HITS: Final = 1000


def max_total_hits(settings: Mapping[str, Any]) -> int:
    """From an index's effective settings; absent (an index without settings) means the default."""
    return int((settings.get("pagination") or {}).get("maxTotalHits", DEFAULT_MAX_TOTAL_HITS))


def capped_window(offset: int, limit: int, cap: int) -> tuple[int, int]:
    """The offset and limit that stay within the first ``cap`` hits."""
    offset = min(offset, cap)
    return offset, min(limit, cap - offset)
