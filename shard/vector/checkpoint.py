"""A space's checkpoint file: its rows, owners and HNSW graph as of one vector generation.

Written to ``<name>.tmp``, fsynced, renamed over ``<name>.npz`` and the directory fsynced, so a crash
leaves either the previous checkpoint or the new one, never a torn file. The file names the space's
base generation: a checkpoint of an earlier life of the space (before the index was cleared, or the
embedder removed and added again) is never taken for the current one.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import orjson

from common.fsync import fsync_path
from shard.vector.ann import ApproximateIndex
from shard.vector.space import Space
from shard.vector.storage import SpaceRecord

SpaceId = tuple[int, str]
_SUFFIX = ".npz"
_TEMPORARY = ".tmp"


def path_for(directory: Path, key: SpaceId) -> Path:
    digest = hashlib.blake2b(key[1].encode(), digest_size=8).hexdigest()
    return directory / f"{key[0]}-{digest}{_SUFFIX}"


def write(directory: Path, key: SpaceId, space: Space, base: int, generation: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    final = path_for(directory, key)
    temporary = final.with_suffix(_TEMPORARY)
    meta = {
        "embedder": key[1],
        "base": base,
        "generation": generation,
        "dimensions": space.dimensions,
        "binary": space.binary,
    }
    arrays = {
        "meta": np.frombuffer(orjson.dumps(meta), dtype=np.uint8),
        "rows": space.rows[: space.used],
        "owners": space.owners[: space.used],
    }
    ann = space.ann  # read once: a graph built in the background may be swapped in meanwhile
    if ann is not None:
        arrays["ann"] = ann.serialize()
        arrays["annSlots"] = ann.graph_slots
    with open(temporary, "wb") as file:
        np.savez(file, **arrays)  # type: ignore[arg-type]
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, final)
    fsync_path(directory)


def read(directory: Path, key: SpaceId, record: SpaceRecord) -> tuple[Space, int] | None:
    """The checkpointed space and its generation, or None when there is none for the space's
    current life (or it is unreadable: the space is then rebuilt from LMDB)."""
    path = path_for(directory, key)
    if not path.exists():
        return None
    try:
        with np.load(path) as saved:
            meta = orjson.loads(saved["meta"].tobytes())
            if (
                meta["embedder"] != key[1]
                or meta["base"] != record.base
                or meta["generation"] > record.generation
                or meta["dimensions"] != record.dimensions
                or meta["binary"] != record.binary
            ):
                return None
            space = Space(meta["dimensions"], meta["binary"])
            space.rows = saved["rows"].copy()
            space.owners = saved["owners"].copy()
            if "ann" in saved.files:
                space.ann = ApproximateIndex.deserialize(saved["ann"], saved["annSlots"])
    except (OSError, ValueError, KeyError, RuntimeError):  # faiss raises RuntimeError on a bad index
        return None
    space.used = len(space.owners)
    alive = space.owners >= 0
    space.free = np.flatnonzero(~alive).tolist()
    for slot, doc_id in zip(np.flatnonzero(alive).tolist(), space.owners[alive].tolist(), strict=True):
        space.slots.setdefault(doc_id, []).append(slot)
    return space, int(meta["generation"])


def remove(directory: Path, key: SpaceId) -> None:
    path_for(directory, key).unlink(missing_ok=True)


def discard_temporary(directory: Path) -> None:
    """Half-written checkpoints of a crashed shard."""
    if directory.exists():
        for path in directory.glob(f"*{_TEMPORARY}"):
            path.unlink()


def discard_others(directory: Path, known: set[Path]) -> None:
    """Checkpoints of spaces LMDB no longer holds (an index or embedder removed before a crash)."""
    if directory.exists():
        for path in directory.glob(f"*{_SUFFIX}"):
            if path not in known:
                path.unlink()
