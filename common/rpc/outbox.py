"""Messages for one gRPC stream, gathered while its writer is busy and sent together.

Each message written on a gRPC aio stream costs a completion round through gRPC's poller thread and a
wake-up of the event loop on both sides, whatever its size. Under load several searches (answers)
are ready while the previous message is still being written; sending them as one message pays that
cost once. Nothing waits to fill a batch: whatever is there when the writer is free goes at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Outbox(Generic[T]):
    """Items to send, in order; one event loop puts and one stream writer takes."""

    def __init__(self) -> None:
        self._items: list[T] = []
        self._ready = asyncio.Event()
        self._closed = False

    def put(self, item: T) -> None:
        self._items.append(item)
        self._ready.set()

    def close(self) -> None:
        """No more items: ``batches`` ends once the items already put are taken."""
        self._closed = True
        self._ready.set()

    async def batches(self) -> AsyncIterator[list[T]]:
        """Every item put, as lists of those waiting whenever the writer asks for the next."""
        while True:
            if self._items:
                items, self._items = self._items, []
                yield items
            elif self._closed:
                return
            else:
                await self._ready.wait()
                self._ready.clear()
