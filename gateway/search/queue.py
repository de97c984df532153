"""The search queue (search.md §0): a bound on concurrent searches and on searches waiting for one.

At most ``cpu count * --experimental-nb-searches-per-core`` searches run at once; up to
``--experimental-search-queue-size`` more wait for a slot, in arrival order. A search arriving when the
queue is full, or waiting longer than ``--experimental-drop-search-after`` seconds, is refused with 503
``too_many_search_requests`` (the error handler adds ``Retry-After: 10`` to every 503).

Choices the contract leaves open:
* the queue size counts *waiting* searches only, so a search starts at once whenever a slot is free
  (``--experimental-search-queue-size`` cannot be 0 anyway: the option's minimum is 1);
* when the queue is full the newcomer is refused (the reference evicts a random waiting search instead;
  clients see the same 503 either way, and refusing the newcomer keeps waiting searches in FIFO order);
* the ``N`` of the message is the queue size, the configured bound that was hit.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from sanic import Sanic

from common.config import Config
from common.errors import ApiError


def too_many_search_requests(queue_size: int) -> ApiError:
    return ApiError(
        "too_many_search_requests",
        f"Too many search requests running at the same time: {queue_size}. Retry after 10s.",
    )


def cpu_count() -> int:
    """CPUs this process may run on (its affinity mask), as the reference counts cores."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class SearchQueue:
    """Slots handed over to waiters in FIFO order; lives on one event loop (the gateway's)."""

    def __init__(self, slots: int, queue_size: int, drop_after: float) -> None:
        self.slots = slots
        self.queue_size = queue_size
        self.drop_after = drop_after
        self.running = 0
        self._waiting: deque[asyncio.Future[None]] = deque()

    @classmethod
    def from_config(cls, config: Config) -> SearchQueue:
        return cls(
            slots=cpu_count() * config.experimental_nb_searches_per_core,
            queue_size=config.experimental_search_queue_size,
            drop_after=config.experimental_drop_search_after,
        )

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one search slot for the duration of the block."""
        await self._acquire()
        try:
            yield
        finally:
            self._release()

    async def _acquire(self) -> None:
        if self.running < self.slots and not self._waiting:
            self.running += 1
            return
        if len(self._waiting) >= self.queue_size:
            raise too_many_search_requests(self.queue_size)
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        try:
            async with asyncio.timeout(self.drop_after):
                await turn
        except BaseException as error:  # dropped after waiting too long, or the client went away
            if turn.done() and not turn.cancelled():
                self._release()  # the slot was handed over just as we gave up: pass it on
            else:
                turn.cancel()
                self._waiting.remove(turn)
            if isinstance(error, TimeoutError):
                raise too_many_search_requests(self.queue_size) from None
            raise

    def _release(self) -> None:
        """Hand the slot to the oldest waiter, or free it."""
        while self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self.running -= 1


def search_slot(app: Sanic) -> AbstractAsyncContextManager[None]:
    """The app's search queue slot, taken by search handlers once the request is validated."""
    queue: SearchQueue = app.ctx.search_queue
    return queue.slot()
