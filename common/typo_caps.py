"""The caps of typo derivations, index-wide: shards find the words of a typo lookup in their own
vocabularies (``shard/query/typos.py``), the gateway settles the lookups whose union over the shards a
cap may cut (``gateway/search/typo_caps.py``), so 1 and N shards derive the same words."""

from __future__ import annotations

from collections.abc import Sequence

ONE_TYPO_LIMIT = 150
TWO_TYPOS_LIMIT = 50
TYPO_LIMITS = (0, ONE_TYPO_LIMIT, TWO_TYPOS_LIMIT)
"""Per typo count, how many words a lookup keeps: the first in key order (UTF-8 order, which is code
point order), over the whole index."""

LookupKey = tuple[str, int, bool]
"""A typo lookup: the query word, its most typos, whether it is a prefix."""
Found = Sequence[tuple[str, int]]
"""A lookup's (word, typos), in key order."""


def may_pass_cap(found: Found, shards: int) -> bool:
    """Whether ``shards`` shards may find more words at some typo count than its cap, one of them having
    found these: not unless one finds more than ``cap / shards``."""
    counts = [0] * len(TYPO_LIMITS)
    for _, typos in found:
        counts[typos] += 1
    return any(count * shards > limit for count, limit in zip(counts[1:], TYPO_LIMITS[1:], strict=True))


def index_wide(lists: Sequence[Found]) -> tuple[list[tuple[str, int]], bool]:
    """The words one shard holding every document keeps, from each shard's capped words of one lookup
    (a shard's first words in key order include all of its words among the index's first), in key
    order, and whether a cap cut their union."""
    kept: list[tuple[str, int]] = []
    cut = False
    for typos, limit in enumerate(TYPO_LIMITS):
        if typos == 0:
            continue
        words = sorted({word for found in lists for word, count in found if count == typos})
        cut = cut or len(words) > limit
        kept.extend((word, typos) for word in words[:limit])
    kept.sort()
    return kept, cut
