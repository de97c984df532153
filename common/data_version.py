"""The data directory's storage format version: ``<db path>/VERSION``, one integer.

It is the shards' storage format (``shard/index/env.py::FORMAT_VERSION``, which each shard also
records in its own store and checks): the launcher reads this file before any process starts, so an
older directory is refused with one clear message, or upgraded in place with
``--experimental-dumpless-upgrade`` (an ``upgradeDatabase`` task, ``scheduler/upgrade.py``), after
which the scheduler writes the current version here. The file is replaced atomically (temporary
file, fsync, rename, directory fsync).
"""

from __future__ import annotations

import os
from pathlib import Path

from common.fsync import fsync_path

CURRENT_FORMAT = 8
"""Kept equal to the shards' ``FORMAT_VERSION`` (a unit test checks it)."""
OLDEST_UPGRADABLE = 3
"""Formats 3 to 7 differ from 8 only in what the searchable tables hold (3: analysis of ``ß``,
``ø ł þ ħ`` and Thai marks; 4: postings without START/WHOLE marks; 5: no per-field word counts in the
index state, and words of ``_geo``, ``_geojson`` and ``_vectors``; 6: no three-character prefixes;
7: short texts stemmed in the shard's most common language, no impacts table),
which the upgrade rebuilds from the stored documents; older formats laid documents out differently
and need a re-index."""

_FILE = "VERSION"


class DataVersionError(ValueError):
    """The directory cannot be opened by this Sift; the message says why and what to do."""


def version_file(root: Path) -> Path:
    return root / _FILE


def read_format(root: Path) -> int | None:
    """The recorded format, or None when the file is absent."""
    try:
        text = version_file(root).read_text().strip()
    except FileNotFoundError:
        return None
    if not text.isdecimal():
        raise DataVersionError(f"The file `{version_file(root)}` should hold a format number, not `{text}`.")
    return int(text)


def write_format(root: Path, version: int = CURRENT_FORMAT) -> None:
    target = version_file(root)
    temporary = target.with_name(f".{_FILE}.tmp")
    with temporary.open("w") as file:
        file.write(f"{version}\n")
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, target)
    fsync_path(root)


def shown(version: int) -> str:
    """A format as the ``upgradeDatabase`` task details show versions (``vX.Y.Z``)."""
    return f"v{version}.0.0"
