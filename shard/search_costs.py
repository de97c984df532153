"""Which searches are cheap enough to run on the shard's event loop instead of the search thread.

Handing a search to the search thread and its answer back costs two thread wake-ups and GIL hand-overs
with the event loop and gRPC's poller thread: on movies at 16 clients that hop, not the search, took
most of the shard's samples (issue 23). A search that costs less than the hop is better run where the
request arrived. A search on the loop holds up the shard's other rpcs until it ends, so only searches
known to be cheap run there: each search's CPU time is remembered per *shape* (the index, the
parameters given, the query's word lengths), a running average of its recent searches, and a shape
runs on the loop once that average is under ``INLINE_BELOW_NS``. A shape never seen runs on the
thread first. CPU time of the running thread (``time.thread_time_ns``) is what is measured, so a busy
machine, which stretches wall time, does not make cheap searches look dear.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

INLINE_BELOW_NS = 3_000_000
"""Searches of a shape averaging less CPU time than this run on the event loop. The loop then stalls at
most a few milliseconds per such search, which rpcs like ``Health`` (1 s timeout) or ``AbortBatch``
do not notice; on movies every query class is below it, on cities one-word, name and filter ones."""

_WEIGHT = 4
"""The running average gives the newest search 1/``_WEIGHT`` of the weight: one dear search of a
cheap shape (a frequent word among rare ones) moves its shape back to the thread for a few searches."""

_MAX_SHAPES = 4096
"""Shapes remembered at most; past that the memory starts over (index names are unbounded)."""

Shape = tuple[Any, ...]


def search_shape(index_uid: str, params: dict[str, Any]) -> Shape:
    """What a search's cost mostly depends on, short of running it: the index, which parameters are
    given (filter, facets, sort, highlighting, ...), how many hits it returns, and the query's words
    by length (capped where
    the cost stops changing: typo budgets change at 5 and 9 letters, prefix expansion shrinks with
    length), with whether the last word is a prefix (no trailing space)."""
    q = params.get("q") or ""
    words = tuple(min(len(word), 9) for word in q.split()[:8])
    given = tuple(sorted(key for key, value in params.items() if value is not None))
    return index_uid, given, params.get("offset", 0) + params.get("limit", 20), words, q[-1:] == " "


class SearchCosts:
    """Average CPU time per search shape. Updated from the loop and the search thread: a lost update
    between them only makes an average less fresh."""

    def __init__(self) -> None:
        self._average_ns: dict[Shape, int] = {}

    def cheap(self, shape: Shape) -> bool:
        average = self._average_ns.get(shape)
        return average is not None and average < INLINE_BELOW_NS

    def run(self, shape: Shape, search: Callable[..., T], *args: Any) -> T:
        """``search(*args)``, its CPU time added to its shape's average (failures included)."""
        started = time.thread_time_ns()
        try:
            return search(*args)
        finally:
            spent = time.thread_time_ns() - started
            previous = self._average_ns.get(shape)
            if previous is None and len(self._average_ns) >= _MAX_SHAPES:
                self._average_ns.clear()
            self._average_ns[shape] = (
                spent if previous is None else (previous * (_WEIGHT - 1) + spent) // _WEIGHT
            )
