"""The pieces of the search transport that decide without a cluster: the stream outbox's batching and
which searches the shard runs on its event loop (``common/rpc/outbox.py``, ``shard/search_costs.py``)."""

from __future__ import annotations

import asyncio
import time

from common.rpc.outbox import Outbox
from shard.search_costs import INLINE_BELOW_NS, SearchCosts, search_shape


def test_outbox_sends_what_waited_together_and_ends_after_the_last() -> None:
    async def scenario() -> list[list[int]]:
        outbox: Outbox[int] = Outbox()
        batches = outbox.batches()
        outbox.put(1)
        first = await anext(batches)
        outbox.put(2)
        outbox.put(3)
        outbox.close()
        return [first, *[batch async for batch in batches]]

    assert asyncio.run(scenario()) == [[1], [2, 3]]


def test_outbox_waits_for_an_item() -> None:
    async def scenario() -> list[int]:
        outbox: Outbox[int] = Outbox()
        waiting = asyncio.ensure_future(anext(outbox.batches()))
        await asyncio.sleep(0)
        assert not waiting.done()
        outbox.put(7)
        return await waiting

    assert asyncio.run(scenario()) == [7]


def test_a_shape_runs_on_the_loop_once_its_searches_are_known_to_be_cheap() -> None:
    costs = SearchCosts()
    shape = search_shape("movies", {"q": "star wars", "limit": 20})
    assert not costs.cheap(shape)  # never seen: the thread first
    assert costs.run(shape, lambda: "done") == "done"
    assert costs.cheap(shape)


def test_a_dear_search_moves_its_shape_back_to_the_thread() -> None:
    costs = SearchCosts()
    shape = search_shape("movies", {"q": "star", "limit": 20})
    costs.run(shape, lambda: None)
    assert costs.cheap(shape)
    costs.run(shape, lambda: _burn(5 * INLINE_BELOW_NS))  # e.g. a frequent word among rare ones
    assert not costs.cheap(shape)


def test_shapes_tell_apart_what_makes_a_search_dear() -> None:
    base = search_shape("cities", {"q": "paris", "limit": 20})
    assert base == search_shape("cities", {"q": "lyons", "limit": 20})  # same word length
    assert base != search_shape("cities", {"q": "p", "limit": 20})  # a short prefix expands to more
    assert base != search_shape("cities", {"q": "paris ", "limit": 20})  # not a prefix
    assert base != search_shape("cities", {"q": "paris", "limit": 1000})
    assert base != search_shape("cities", {"q": "paris", "limit": 20, "facets": ["country"]})
    assert base != search_shape("movies", {"q": "paris", "limit": 20})


def _burn(nanoseconds: int) -> None:
    started = time.thread_time_ns()
    while time.thread_time_ns() - started < nanoseconds:
        pass
