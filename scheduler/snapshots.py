"""Snapshots (task ``snapshotCreation``, core.md §3.9): the whole cluster's data as of one moment, one file.

A snapshot batch runs between batches (the executor runs one batch at a time), so no shard changes
during it. Steps:

1. every shard copies its directory into ``<snapshot dir>/.<name>.staging/shards/<k>`` (an
   ``ApplyBatch`` with a ``snapshot`` operation, ``shard/index/snapshot.py``; LMDB's copy, compacted
   unless ``--experimental-no-snapshot-compaction``);
2. the scheduler copies its own store from one read transaction, then marks the batch's snapshot tasks
   succeeded in the copy, so a restored instance shows them done and does not take them again;
3. the staged directory is packed (``common/snapshot_archive.py``) into ``.<name>.snapshot.tmp``, which
   is fsynced and renamed to ``<name>.snapshot`` (the directory fsynced): the file is complete or absent;
4. ``on_snapshot(path)`` (an optional uploader, e.g. to object storage) is called with the finished file.

Crash safety: until the rename, the previous ``.snapshot`` (if any) is untouched. A scheduler killed
mid-way leaves the staging directory and the temporary file, which the next start removes before it
re-runs the in-flight batch, so the snapshot is taken again; a shard killed mid-copy is restarted and
asked again (``ShardClients`` re-sends until it answers), and its copy starts over.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from common.config import Config
from common.fsync import fsync_path
from common.logging import get_logger
from common.snapshot_archive import Manifest, pack, snapshot_name, staged_files
from common.task_vocabulary import SUCCEEDED
from common.timefmt import now_ns
from scheduler.batch_records import write_batch
from scheduler.batching import BatchPlan
from scheduler.progress import Progress
from scheduler.shards import ShardClients, encode
from scheduler.store import SchedulerStore
from scheduler.tasks import Outcome

log = get_logger(__name__)

Uploader = Callable[[Path], Awaitable[None]]
"""Called with the path of each finished snapshot file; raising fails the snapshot's tasks."""

STEPS = ("snapshotting the shards", "snapshotting the scheduler", "packing the snapshot")


class Snapshots:
    def __init__(
        self,
        store: SchedulerStore,
        shards: ShardClients,
        config: Config,
        on_snapshot: Uploader | None = None,
    ) -> None:
        self.store = store
        self.shards = shards
        self.directory = config.snapshot_dir.resolve()
        self.name = snapshot_name(config.db_path)
        self.compact = not config.experimental_no_snapshot_compaction
        self.on_snapshot = on_snapshot

    @property
    def path(self) -> Path:
        """Where the finished snapshot is: ``<snapshot dir>/<db dir name>.snapshot``."""
        return self.directory / self.name

    @property
    def _staging(self) -> Path:
        return self.directory / f".{self.name}.staging"

    @property
    def _temporary(self) -> Path:
        return self.directory / f".{self.name}.tmp"

    def remove_leftovers(self) -> None:
        """What a snapshot interrupted by a crash left (never the finished file). A snapshot directory
        that cannot be one (a file is there) holds nothing: the next snapshot fails, not the start."""
        if not self.directory.is_dir():
            return
        if self._staging.exists():
            log.warning("removing an interrupted snapshot's copies", path=str(self._staging))
            shutil.rmtree(self._staging)
        self._temporary.unlink(missing_ok=True)

    async def create(
        self, plan: BatchPlan, batch_uid: int, started: int, progress: Progress
    ) -> dict[int, Outcome]:
        """Take the snapshot; every task of the batch succeeds with it."""
        outcomes = {task["uid"]: Outcome(SUCCEEDED) for task in plan.tasks}
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self.remove_leftovers()
            with progress.step(STEPS, 0):
                operations = [
                    [
                        {
                            "op": "snapshot",
                            "path": str(self._staging / "shards" / str(k)),
                            "compact": self.compact,
                        }
                    ]
                    for k in range(self.shards.count)
                ]
                with progress.count("shard", len(operations)) as answers:
                    await self.shards.apply(
                        batch_uid, encode(operations), lambda shard, _result: answers.done(f"shard {shard}")
                    )
            with progress.step(STEPS, 1):
                trace = progress.trace()
                await asyncio.to_thread(self._copy_scheduler, plan, batch_uid, started, dict(outcomes), trace)
            with progress.step(STEPS, 2):
                size = await asyncio.to_thread(self._pack)
        finally:
            # A failed snapshot (e.g. disk full) leaves nothing behind either; a finished one has no
            # temporary file left (it was renamed).
            shutil.rmtree(self._staging, ignore_errors=True)
            self._temporary.unlink(missing_ok=True)
        log.info("snapshot written", path=str(self.path), size=size, compacted=self.compact)
        if self.on_snapshot is not None:
            await self.on_snapshot(self.path)
        return outcomes

    def _copy_scheduler(
        self,
        plan: BatchPlan,
        batch_uid: int,
        started: int,
        outcomes: dict[int, Outcome],
        trace: dict[str, str],
    ) -> None:
        """The store as of one read transaction, with this batch finished in the copy."""
        target = self._staging / "scheduler"
        target.mkdir(parents=True)
        self.store.env.copy(str(target), compact=self.compact)  # from one read transaction of its own
        copy = SchedulerStore(target)
        try:
            with copy.write() as write:
                write_batch(write, plan, batch_uid, started, now_ns(), outcomes, [], trace)
        finally:
            copy.close()
        (target / "lock.mdb").unlink(missing_ok=True)

    def _pack(self) -> int:
        files = staged_files(self._staging)
        shards = self.shards.count
        with self._temporary.open("wb") as out:
            pack(self._staging, Manifest(shards, self.compact, files), out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(self._temporary, self.path)
        fsync_path(self.directory)
        return self.path.stat().st_size


class _Registrar(Protocol):
    async def register(
        self, task_type: str, index_uid: str | None, params: dict[str, Any], details: dict[str, Any] | None
    ) -> dict[str, Any]: ...


async def schedule_snapshots(service: _Registrar, interval: int) -> None:
    """``--schedule-snapshot``: enqueue a ``snapshotCreation`` task every ``interval`` seconds, the first
    one interval after start (as the reference does)."""
    while True:
        await asyncio.sleep(interval)
        task = await service.register("snapshotCreation", None, {}, None)
        log.info("scheduled snapshot enqueued", task_uid=task["uid"])
