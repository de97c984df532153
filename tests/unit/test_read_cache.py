"""The shard's read cache evicts its oldest entries one by one, only as many as a new one needs.

Dropping half of the cache at once rebuilt a dict of up to a million records inside one search (the
1M-document typo queries' p99 of ~400 ms)."""

from __future__ import annotations

from shard.index.read_cache import ReadCache


def test_a_full_cache_drops_only_its_oldest_entries_that_make_room() -> None:
    cache = ReadCache(budget=1000)
    for number in range(10):
        cache.put(0, (0, 0, number), number, 100)
    cache.put(0, (0, 0, "new"), "new", 250)
    assert [cache.get((0, 0, number)) for number in range(10)] == [None, None, None, 3, 4, 5, 6, 7, 8, 9]
    assert cache.get((0, 0, "new")) == "new"
    cache.put(0, (0, 0, "fits"), "fits", 50)
    assert cache.get((0, 0, 3)) == 3
    cache.put(0, (0, 0, "more"), "more", 100)
    assert cache.get((0, 0, 3)) is None and cache.get((0, 0, 4)) == 4
