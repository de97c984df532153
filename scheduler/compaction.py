"""``POST /tasks/compact`` (core.md §3.4.6): the task store rewritten without its free pages, live.

LMDB never gives pages back to the file system: after many deleted tasks (and their payloads) the file
keeps its peak size. A compacting copy (``mdb_env_copy2`` with ``MDB_CP_COMPACT``) writes only the
pages in use, renumbered, into ``compacting/`` beside the store; it runs in a thread from one read
snapshot while the scheduler keeps serving and committing. If something committed meanwhile the copy
is stale and is made again (the last try holds the event loop, so nothing can commit during it).
The fsync'd copy then replaces ``data.mdb`` by a rename, on the event loop with no transaction open,
and the environment is reopened on it: the scheduler carries on, nothing needs a restart.

Crash safety: until the rename, ``data.mdb`` is untouched and a ``compacting/`` left by a crash is
removed at start-up; the rename is atomic, and the copy it installs was complete and durable before it.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path

from common.fsync import fsync_path
from common.logging import get_logger
from scheduler.store import SchedulerStore

log = get_logger(__name__)
_WORK_DIR = "compacting"
_BACKGROUND_TRIES = 3


@dataclass(frozen=True)
class Compaction:
    pre_size: int
    """Bytes of ``data.mdb`` before, and after."""
    post_size: int


def remove_leftovers(store: SchedulerStore) -> None:
    """Drop the copy of a compaction that a crash interrupted (the store itself was never touched)."""
    work = store.path / _WORK_DIR
    if work.exists():
        log.warning("removing an interrupted task store compaction", path=str(work))
        shutil.rmtree(work)


async def compact(store: SchedulerStore) -> Compaction:
    """Compact ``store`` and swap the copy in. One at a time: the caller serialises calls."""
    pre_size = store.data_file.stat().st_size
    work = store.path / _WORK_DIR
    for _ in range(_BACKGROUND_TRIES):
        snapshot = await asyncio.to_thread(_copy, store, work)
        if store.env.info()["last_txnid"] == snapshot:
            break
    else:
        # Commits kept landing during the copies: copy once more without yielding to the event loop.
        _copy(store, work)
    store.replace_data(work / "data.mdb")
    shutil.rmtree(work)
    post_size = store.data_file.stat().st_size
    log.info("task store compacted", pre_size=pre_size, post_size=post_size)
    return Compaction(pre_size, post_size)


def _copy(store: SchedulerStore, work: Path) -> int:
    """A durable compacted copy of ``store`` in ``work``; returns the id of the snapshot it holds."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    with store.env.begin() as txn:
        store.env.copy(str(work), compact=True, txn=txn)
        snapshot = int(txn.id())
    fsync_path(work / "data.mdb")
    return snapshot
