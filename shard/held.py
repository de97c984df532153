"""A prepared batch: applied in its write transaction, held open on a thread of its own until the
scheduler decides (``scheduler/prepare.py``).

LMDB ties a write transaction to the thread that began it, so the batch runs on its own thread from
its first write to its commit or rollback; the rpcs only hand it the decision. Nothing of it is
visible meanwhile (searches read committed snapshots). The shard holds at most one such batch.

A task that fails as the batch prepares writes nothing, so the held batch is also the batch without
that task: the scheduler's decision to skip it everywhere commits what is held, not a second
application of the batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Protocol

from common.logging import get_logger
from common.timing import Steps
from shard.batches import BatchResult, Hold, Operation
from shard.vector.prepared import PreparedEmbeddings

log = get_logger(__name__)

Work = Callable[[Hold], BatchResult]
"""Applies the batch, calling the hold it is given once prepared; returns the committed result."""


class HeldBatch:
    def __init__(self, batch_uid: int, skip: frozenset[int], work: Work, steps: Steps | None) -> None:
        self.batch_uid = batch_uid
        self.skip = skip
        self.left_out = skip
        """``skip`` and the tasks that failed as the batch prepared: what the held batch leaves out."""
        self.steps = steps
        self._prepared_steps: set[str] = set()
        self.prepared: Future[tuple[BatchResult, bool]] = Future()
        """(result, held): held is False when the batch was applied before (its recorded result)."""
        self.done: Future[BatchResult] = Future()
        self._decision: Future[bool] = Future()
        self._deciding = threading.Lock()
        self._thread = threading.Thread(
            target=self._run, args=(work,), name=f"batch-{batch_uid}", daemon=True
        )
        self._thread.start()

    def matches(self, batch_uid: int, skip: frozenset[int]) -> bool:
        return self.batch_uid == batch_uid and skip in (self.skip, self.left_out) and not self.done.done()

    def _hold(self, result: BatchResult) -> bool:
        failed = {int(uid) for uid, counts in result.get("tasks", {}).items() if "error" in counts}
        self.left_out = self.skip | failed
        if self.steps is not None:
            self._prepared_steps = set(self.steps.durations)
        self.prepared.set_result((result, True))
        return self._decision.result()

    def _run(self, work: Work) -> None:
        try:
            result = work(self._hold)
        except BaseException as error:  # handed to whoever waits: the rpc answers with it
            if not self.prepared.done():
                self.prepared.set_exception(error)
            self.done.set_exception(error)
        else:
            if not self.prepared.done():
                self.prepared.set_result((result, False))
            self.done.set_result(result)

    def commit(self, steps: Steps | None) -> BatchResult:
        """Commit; ``steps`` gets the steps timed since the batch prepared."""
        self._decide(True)
        result = self.done.result()
        if steps is not None and self.steps is not None:
            for name, nanoseconds in self.steps.durations.items():
                if name not in self._prepared_steps:
                    steps.durations[name] = nanoseconds
        return result

    def drop(self) -> None:
        """Roll the batch back (if it did not commit already) and wait until its thread ended."""
        self._decide(False)
        self._thread.join()

    def _decide(self, commit: bool) -> None:
        with self._deciding:  # the first decision stands
            if not self._decision.done():
                self._decision.set_result(commit)


class Apply(Protocol):
    """``ShardStore.apply_batch``."""

    def __call__(
        self,
        batch_uid: int,
        operations: list[Operation],
        should_abort: Callable[[], bool],
        steps: Steps | None,
        *,
        skip: frozenset[int],
        embeddings: PreparedEmbeddings | None,
        hold: Hold | None = None,
    ) -> BatchResult: ...


def _never() -> bool:
    return False


class BatchPhases:
    """The shard's side of a batch in two phases: ``prepare``, then ``commit`` or ``drop``."""

    def __init__(self, directory: Path, apply: Apply) -> None:
        self.directory = directory
        """Where the embedders' answers of a prepared batch are kept (``vector/prepared.py``)."""
        self._apply = apply
        self._held: HeldBatch | None = None
        self._lock = threading.Lock()
        """Serialises the rpcs that start, decide or drop the held batch."""

    def prepare(
        self,
        batch_uid: int,
        operations: list[Operation],
        skip: frozenset[int],
        should_abort: Callable[[], bool] = _never,
        steps: Steps | None = None,
    ) -> tuple[BatchResult, bool]:
        """Apply the batch without ``skip``'s tasks and hold it open, uncommitted. Returns (result,
        held); held is False when the batch was applied before (the result is its record). Asked
        again the same (a restarted scheduler), answers with what it holds."""
        with self._lock:
            held = self._held
            if held is None or not held.matches(batch_uid, skip):
                self._drop_held()
                embeddings = PreparedEmbeddings.load(self.directory, batch_uid)

                def work(hold: Hold) -> BatchResult:
                    args = (batch_uid, operations, should_abort, steps)
                    return self._apply(*args, skip=skip, embeddings=embeddings, hold=hold)

                held = self._held = HeldBatch(batch_uid, skip, work, steps)
        return held.prepared.result()

    def commit(
        self,
        batch_uid: int,
        operations: list[Operation],
        skip: frozenset[int],
        should_abort: Callable[[], bool] = _never,
        steps: Steps | None = None,
    ) -> BatchResult:
        """Commit the held batch; a shard restarted since it prepared, or a batch sent in one phase,
        is applied now, with the embedders' answers kept when it prepared (``should_abort``: the
        cancelation of a batch in one phase, which then rolls back)."""
        with self._lock:
            held = self._held
            if held is not None and held.matches(batch_uid, skip):
                self._held = None
                result = held.commit(steps)
            else:
                if held is not None:
                    log.info(
                        "held batch is not the one to commit, applying it again",
                        batch_uid=batch_uid,
                        held=held.batch_uid,
                        skip=sorted(skip),
                        held_left_out=sorted(held.left_out),
                    )
                self._drop_held()
                embeddings = PreparedEmbeddings.load(self.directory, batch_uid)
                args = (batch_uid, operations, should_abort, steps)
                result = self._apply(*args, skip=skip, embeddings=embeddings)
            PreparedEmbeddings(self.directory, batch_uid).remove()
            return result

    def drop(self, batch_uid: int | None) -> None:
        """Roll back the held batch (``batch_uid``'s, or any when None); its kept answers stay until
        the batch commits or a later one starts."""
        with self._lock:
            if self._held is not None and batch_uid in (None, self._held.batch_uid):
                self._drop_held()

    def _drop_held(self) -> None:
        if self._held is not None:
            self._held.drop()
            self._held = None
