"""Imports at launch (``--import-dump``, ``--import-snapshot``): the launch rules and the atomic swap.

Shared by both imports. The rules, worded as the reference words them:

- a database already exists: refused unless ``--ignore-<kind>-if-db-exists`` (then skipped);
- the file is missing: refused unless ``--ignore-missing-<kind>`` (then skipped); an unreadable or
  corrupt file is always refused (the importer raises :class:`ImportFailed`);
- the ignore flags without the import: refused by ``common/config/rules.py`` when options are read.

An import builds the whole database in a sibling directory (``<db-path>.import``), then renames it to
``--db-path`` in one ``rename``: a failed or killed import never leaves a half-imported database, and
the cluster starts, and so accepts requests, only once the import is complete (fully indexed).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from common.config import Config
from common.fsync import fsync_path

_OWN_ENTRIES = frozenset({"sift.lock", "run"})
"""What a launch creates in the data directory before any data: their presence is no database."""


class ImportFailed(Exception):
    """The launch import was refused or failed; the message is the launch error."""


@dataclass(frozen=True)
class LaunchImport:
    """One import requested at launch."""

    kind: str
    """``dump`` or ``snapshot``: the word of the options and messages."""
    path: Path
    ignore_missing: bool
    ignore_if_db_exists: bool


def requested_import(config: Config) -> LaunchImport | None:
    """The import this launch asks for (the config rules allow at most one), or ``None``."""
    if config.import_dump is not None:
        return LaunchImport(
            "dump", config.import_dump, config.ignore_missing_dump, config.ignore_dump_if_db_exists
        )
    if config.import_snapshot is not None:
        return LaunchImport(
            "snapshot",
            config.import_snapshot,
            config.ignore_missing_snapshot,
            config.ignore_snapshot_if_db_exists,
        )
    return None


def database_exists(db_path: Path) -> bool:
    """A database exists when the directory holds anything but what a launch itself creates first."""
    if not db_path.is_dir():
        return db_path.exists()
    return any(entry.name not in _OWN_ENTRIES for entry in db_path.iterdir())


def should_import(request: LaunchImport, db_path: Path) -> bool:
    """Apply the launch rules: ``True`` to import, ``False`` to launch on the existing (or a new)
    database without importing; raises :class:`ImportFailed` for a refused launch."""
    if database_exists(db_path):
        if request.ignore_if_db_exists:
            return False
        raise ImportFailed(f'database already exists at "{db_path}", try to delete it or rename it')
    if not request.path.is_file():
        if request.ignore_missing:
            return False
        # The reference quotes the dump's path and not the snapshot's; so do we.
        where = f'"{request.path}"' if request.kind == "dump" else str(request.path)
        raise ImportFailed(f"{request.kind} doesn't exist at {where}")
    return True


def staging_dir(db_path: Path) -> Path:
    """Where an import builds the database before it is renamed into place."""
    return db_path.with_name(db_path.name + ".import")


def import_atomically(db_path: Path, build: Callable[[Path], None]) -> None:
    """Run ``build(staging)`` on an empty staging directory, then rename it to ``db_path``.

    A leftover staging directory (an import killed earlier) is removed first. If ``build`` raises,
    the staging directory is removed and ``db_path`` is untouched; the exception propagates.
    """
    staging = staging_dir(db_path)
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    try:
        build(staging)
        shutil.rmtree(staging / "run", ignore_errors=True)
        (staging / "sift.lock").unlink(missing_ok=True)
        _sync_tree(staging)
        if db_path.exists():
            # Only what a launch creates before data (database_exists said so): not worth keeping.
            shutil.rmtree(db_path)
        os.rename(staging, db_path)
        fsync_path(db_path.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _sync_tree(root: Path) -> None:
    """Every file and directory of the imported database on disk before the rename publishes it."""
    for directory, _, files in os.walk(root):
        for name in files:
            fsync_path(Path(directory) / name)
        fsync_path(Path(directory))


Importer = Callable[[Config, Path, Path], None]
"""``importer(config, file, staging)`` builds the database from ``file`` in ``staging``; raises
:class:`ImportFailed` (or any exception) when it cannot."""


def run_launch_import(config: Config, importers: dict[str, Importer]) -> None:
    """The launch's import, if it asks for one and the rules allow it, done before the cluster starts."""
    request = requested_import(config)
    if request is None or not should_import(request, config.db_path):
        return
    importer = importers[request.kind]
    import_atomically(config.db_path, lambda staging: importer(config, request.path, staging))
