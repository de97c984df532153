"""Searches to one shard multiplexed over one long-lived gRPC stream.

A unary gRPC call costs about 0.6 ms of setup on this stack, paid per shard per search and again
for every extra round (term counts, distinct counts, federated unions); a message on an open stream
does not (measured: 0.93 vs 0.33 ms per round trip back to back, 0.94 vs 0.55 ms with idle gaps).
Each search is tagged with a call id and the shard answers in any order (``shard/server.py``). Calls
that wait while the previous message is written go together in the next one (``common/rpc/outbox.py``),
and so do the shard's answers.

A stream that breaks (the shard restarted, or stopped) fails the searches in flight on it with
``SearchStreamBroken``; the next search opens a new stream, which waits for the shard to be ready
(as the gateway's unary calls do) rather than failing at once while it restarts.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import grpc

from common.rpc import shard_pb2, shard_pb2_grpc
from common.rpc.outbox import Outbox


class ShardSearchError(RuntimeError):
    """A search failed inside the shard with an unexpected error (not a contract error)."""


class SearchStreamBroken(RuntimeError):
    """The stream ended before the shard answered: the search itself may never have run."""


class _Stream:
    """One open stream: its outgoing calls and the answers still awaited on it."""

    def __init__(self, stub: shard_pb2_grpc.ShardStub) -> None:
        self.outbox: Outbox[shard_pb2.SearchCall] = Outbox()
        self.pending: dict[int, asyncio.Future[shard_pb2.SearchReply]] = {}
        self.call = stub.Search(self._calls(), wait_for_ready=True)
        self.reader = asyncio.create_task(self._read(self.call))

    async def _calls(self) -> AsyncIterator[shard_pb2.SearchCalls]:
        async for calls in self.outbox.batches():
            yield shard_pb2.SearchCalls(calls=calls)

    async def _read(self, messages: AsyncIterator[shard_pb2.SearchAnswers]) -> None:
        failure: BaseException = SearchStreamBroken("the shard closed the search stream")
        try:
            async for message in messages:
                for answer in message.answers:
                    future = self.pending.pop(answer.call_id, None)
                    if future is None or future.done():
                        continue  # its search was cancelled
                    if answer.failure:
                        future.set_exception(ShardSearchError(answer.failure))
                    else:
                        future.set_result(answer.reply)
        except grpc.aio.AioRpcError as error:
            failure = SearchStreamBroken(f"the search stream broke: {error.code().name} {error.details()}")
        except asyncio.CancelledError:
            failure = SearchStreamBroken("the search stream was closed")
            raise
        finally:
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(failure)
            self.pending.clear()


class SearchStream:
    """Opened lazily inside the server's event loop, like the channel it uses."""

    def __init__(self, stub: shard_pb2_grpc.ShardStub) -> None:
        self._stub = stub
        self._stream: _Stream | None = None
        self._call_ids = itertools.count()

    def send(self, request: shard_pb2.SearchRequest) -> asyncio.Future[shard_pb2.SearchReply]:
        """The search's reply to come. A plain future, not a task: a search costs one less task per
        shard. Cancelling it forgets the search; its answer is dropped when it arrives."""
        stream = self._stream
        if stream is None or stream.reader.done():
            stream = self._stream = _Stream(self._stub)
        call_id = next(self._call_ids)
        future: asyncio.Future[shard_pb2.SearchReply] = asyncio.get_running_loop().create_future()
        stream.pending[call_id] = future
        stream.outbox.put(shard_pb2.SearchCall(call_id=call_id, request=request))
        return future

    async def close(self) -> None:
        if self._stream is not None:
            self._stream.call.cancel()
            self._stream.reader.cancel()
            await asyncio.gather(self._stream.reader, return_exceptions=True)
