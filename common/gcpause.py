"""The cyclic garbage collector around bulk allocation of acyclic JSON values, and in processes that keep
large caches of acyclic values."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Documents are acyclic, but allocating a million of them triggers repeated full collections that
    quadruple the parse time; the collector is resumed (if it was running) as soon as the work ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


FULL_COLLECTION_EVERY = 1000
"""Young-generation collections between two full ones (CPython's default is 10)."""


def keep_full_collections_rare() -> None:
    """For a shard: its read cache holds thousands of decoded records, and every full collection walks
    them all. With CPython's defaults, 608 searches on a 1M-document shard paid 18 full collections of
    ~60 ms (12% of their time, landing on single queries). The objects alive at start-up (modules,
    functions: ~100k) are frozen out of every later collection, and full collections come 100 times
    less often; young collections still reclaim the cycles a search leaves, and the rare full ones
    the cycles that outlived them."""
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)
