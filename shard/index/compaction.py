"""Compacting the shard's store (task ``indexCompaction``): an LMDB compacting copy, swapped in atomically.

Every index of the shard lives in one LMDB environment, so compacting "an index" compacts the whole
store: LMDB only gives pages back by copying the environment without its free pages (copy-on-write
leaves them behind as batches rewrite postings and documents), and the copy is whole or nothing.

Crash safety, step by step (``kill -9`` may strike anywhere):

1. the copy is written to ``compaction/`` beside the store, the batch's result is recorded in the copy
   (the copy is then the store *with this batch applied*), and the file is fsynced;
2. ``rename(compaction/data.mdb, data.mdb)`` replaces the store atomically, then the directory is
   fsynced. Before the rename the old store is intact and holds no record of the batch, so the
   re-sent batch compacts again; after it, the new store answers the re-sent batch from its record;
3. the old environment is closed once no read uses it, and the copy opened in its place (``EnvGate``).

A leftover ``compaction/`` directory (a crash before step 2 ended) is deleted when the shard starts.
No batch can commit between the copy and the swap: the store's write lock is held throughout.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Final

import orjson

from common.fsync import fsync_path
from common.logging import get_logger
from shard.index.env import StoreEnv, batch_key

log = get_logger(__name__)

WORK_DIR: Final = "compaction"
DATA_FILE: Final = "data.mdb"


def discard_unfinished(path: Path) -> None:
    """Remove what a compaction interrupted before its swap left behind."""
    shutil.rmtree(path / WORK_DIR, ignore_errors=True)


def data_size(path: Path) -> int:
    return (path / DATA_FILE).stat().st_size


def compacted_copy(env: StoreEnv, batch_uid: int, task_uid: int) -> tuple[Path, dict[str, Any]]:
    """Step 1: the compacted copy's data file, durable and recording the batch, and the batch's result."""
    work = env.path / WORK_DIR
    discard_unfinished(env.path)
    work.mkdir()
    try:
        before = data_size(env.path)
        env.lmdb.copy(str(work), compact=True)
        after = data_size(work)
        sizes = {"preCompactionSize": before, "postCompactionSize": after}
        result: dict[str, Any] = {"tasks": {str(task_uid): sizes}, "indexes": {}}
        copy = StoreEnv(work)
        try:
            with copy.lmdb.begin(write=True) as txn:
                txn.put(batch_key(batch_uid), orjson.dumps(result), db=copy.batches)
        finally:
            copy.close()
        fsync_path(work / DATA_FILE)
    except BaseException:
        discard_unfinished(env.path)
        raise
    return work / DATA_FILE, result


def swap_in(old: StoreEnv, copied: Path) -> StoreEnv:
    """Steps 2 and 3 (run while nothing uses ``old``): the copy becomes the store; returns it opened."""
    path = old.path
    os.replace(copied, path / DATA_FILE)
    fsync_path(path)
    old.close()
    try:
        # LMDB resets the stale lock file because this process is the environment's only user (the
        # data directory's lock keeps other Sift processes out); another opener would keep it stale.
        opened = StoreEnv(path)
    except BaseException:
        # The old environment is gone: a restarted shard opens the store, the copy since the rename.
        log.critical("the compacted store could not be opened; exiting", path=str(path), exc_info=True)
        os._exit(1)
    discard_unfinished(path)
    return opened
