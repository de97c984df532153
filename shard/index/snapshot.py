"""A shard's part of a snapshot (task ``snapshotCreation``): its whole directory, as of one moment.

The caller holds the store's write lock, so no batch commits and nothing beside the LMDB file (vector
checkpoints, written by batches) changes while this runs. ``data.mdb`` is copied by LMDB from one read
transaction (compacted unless told otherwise); every other file of the directory is copied as it is,
except LMDB's lock file, a compaction's work directory and files still being written (``.tmp``, renamed
into place when complete). Nothing is recorded in the store: a re-sent request copies again.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from shard.index.compaction import DATA_FILE, WORK_DIR
from shard.index.env import StoreEnv

_SKIPPED = {DATA_FILE, "lock.mdb"}


def copy_store(env: StoreEnv, target: Path, compact: bool) -> dict[str, Any]:
    """Write the copy into ``target`` (emptied first); returns its size in bytes."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    env.lmdb.copy(str(target), compact=compact)
    size = (target / DATA_FILE).stat().st_size
    for path in sorted(env.path.rglob("*")):
        relative = path.relative_to(env.path)
        if relative.parts[0] == WORK_DIR or str(relative) in _SKIPPED or path.suffix == ".tmp":
            continue
        if path.is_file():
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / relative)
            size += path.stat().st_size
    return {"tasks": {}, "indexes": {}, "snapshotSize": size}
