"""The per-batch write context: the one write transaction and everything a document-level step needs.

Every change a batch makes goes through a ``WriteContext`` so that later concerns (postings, facet
columns) join the same transaction by taking it as an argument, and are wiped with an index by
registering their databases in ``StoreEnv.per_index``.
"""

from __future__ import annotations

from collections.abc import Callable

from shard.index.codec import DocumentCodec
from shard.index.env import StoreEnv, Txn, index_prefix
from shard.index.state import IndexState, load_state, save_state

# How many documents may be processed between two calls of ``should_abort``.
ABORT_CHECK_INTERVAL = 1000


class BatchAborted(Exception):
    """The batch was cancelled part way; its transaction was aborted and nothing was written."""


class WriteContext:
    def __init__(
        self, env: StoreEnv, codec: DocumentCodec, txn: Txn, should_abort: Callable[[], bool]
    ) -> None:
        self.env = env
        self.codec = codec
        self.txn = txn
        self._should_abort = should_abort
        self._since_check = 0
        self._states: dict[int, IndexState] = {}

    def state(self, index_id: int) -> IndexState:
        """The index's bookkeeping, loaded on first use and saved by ``flush``."""
        state = self._states.get(index_id)
        if state is None:
            state = self._states[index_id] = load_state(self.env, self.txn, index_id)
        return state

    def check_abort(self) -> None:
        self._since_check = 0
        if self._should_abort():
            raise BatchAborted

    def tick(self) -> None:
        """Count one document of work; checks for cancellation every ``ABORT_CHECK_INTERVAL``."""
        self._since_check += 1
        if self._since_check >= ABORT_CHECK_INTERVAL:
            self.check_abort()

    def wipe_index(self, index_id: int) -> int:
        """Delete every key of the index in every per-index database; returns how many documents it had."""
        removed = len(self.state(index_id).live)
        prefix = index_prefix(index_id)
        for db in self.env.per_index:
            cursor = self.txn.cursor(db)
            positioned = cursor.set_range(prefix)
            while positioned and cursor.key().startswith(prefix):
                self.tick()
                positioned = cursor.delete()
        self._states[index_id] = IndexState()
        return removed

    def flush(self) -> None:
        for index_id, state in self._states.items():
            save_state(self.env, self.txn, index_id, state)
