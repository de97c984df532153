"""Writing a dump (``docs/dump-format.md``): the reference's format v6, so it moves both ways.

Files are written into a work directory beside the dump, packed into ``<uid>.dump.tmp`` (a gzipped
tar), fsynced, then renamed to ``<uid>.dump``: a crash at any point leaves no ``.dump`` that is not
complete. :func:`remove_leftovers` deletes what an interrupted dump left.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

import orjson

from common.fsync import fsync_path

FORMAT_VERSION = "V6"
_WORK_SUFFIX = ".dump.work"
_TMP_SUFFIX = ".dump.tmp"
_COMPRESSION = 6
"""gzip level: 9 costs twice the time of 6 for a few percent on JSON."""


def remove_leftovers(dump_dir: Path) -> None:
    """Delete the work directories and unfinished archives of dumps a crash interrupted."""
    if not dump_dir.is_dir():
        return
    for entry in dump_dir.iterdir():
        if entry.name.endswith(_WORK_SUFFIX):
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.name.endswith(_TMP_SUFFIX):
            entry.unlink(missing_ok=True)


class DumpWriter:
    def __init__(self, dump_dir: Path, dump_uid: str) -> None:
        self.dump_dir = dump_dir
        self.dump_uid = dump_uid
        self.work = dump_dir / f"{dump_uid}{_WORK_SUFFIX}"
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        for folder in ("tasks/update_files", "batches", "indexes"):
            (self.work / folder).mkdir(parents=True)

    def write_json(self, name: str, value: Any) -> None:
        (self.work / name).write_bytes(orjson.dumps(value))

    def write_lines(self, name: str, values: Iterable[Any]) -> None:
        with (self.work / name).open("wb") as out:
            for value in values:
                out.write(orjson.dumps(value) + b"\n")

    def write_update_file(self, task_uid: int, ndjson: bytes) -> None:
        (self.work / "tasks" / "update_files" / f"{task_uid}.jsonl").write_bytes(ndjson)

    def index(self, uid: str, metadata: dict[str, Any], settings: dict[str, Any]) -> IO[bytes]:
        """Write an index's metadata and settings; returns its ``documents.jsonl`` open for writing."""
        folder = self.work / "indexes" / uid
        folder.mkdir()
        (folder / "metadata.json").write_bytes(orjson.dumps(metadata))
        (folder / "settings.json").write_bytes(orjson.dumps(settings))
        return (folder / "documents.jsonl").open("wb")

    def finish(self) -> Path:
        """Pack, fsync and publish the dump; returns its path."""
        temporary = self.dump_dir / f"{self.dump_uid}{_TMP_SUFFIX}"
        final = self.dump_dir / f"{self.dump_uid}.dump"
        with tarfile.open(temporary, "w:gz", compresslevel=_COMPRESSION) as archive:
            for entry in sorted(self.work.iterdir()):
                archive.add(entry, arcname=entry.name)
        fsync_path(temporary)
        os.rename(temporary, final)
        fsync_path(self.dump_dir)
        shutil.rmtree(self.work, ignore_errors=True)
        return final

    def abandon(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)
