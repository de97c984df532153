"""Reading a dump (``docs/dump-format.md``): the reference's format v6, which Sift also writes.

The archive is unpacked whole into a work directory before anything is imported, so a truncated or
corrupt file is refused (:class:`DumpError`) before a single index exists.
"""

from __future__ import annotations

import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

SUPPORTED_VERSION = "V6"


class DumpError(Exception):
    """The dump cannot be read; the message says which file and why."""


@dataclass(frozen=True)
class IndexDump:
    uid: str
    metadata: dict[str, Any]
    """``uid``, ``primaryKey``, ``createdAt``, ``updatedAt``."""
    settings: dict[str, Any]
    documents: Path
    """NDJSON, one document a line, in insertion order."""


class DumpReader:
    def __init__(self, path: Path, work: Path) -> None:
        self.path = path
        self.root = work
        try:
            with tarfile.open(path, "r:gz") as archive:
                archive.extractall(work, filter="data")
        except (tarfile.TarError, EOFError, zlib.error, OSError) as error:
            raise DumpError(f'the dump at "{path}" is corrupt or truncated: {error}') from None
        self.metadata: dict[str, Any] = self._json("metadata.json")
        version = self.metadata.get("dumpVersion")
        if version != SUPPORTED_VERSION:
            raise DumpError(
                f'the dump at "{path}" is in format {version}; Sift imports format {SUPPORTED_VERSION}'
            )

    def _json(self, name: str, default: Any = None) -> Any:
        file = self.root / name
        if not file.is_file():
            if default is not None:
                return default
            raise DumpError(f'the dump at "{self.path}" has no `{name}`')
        try:
            return orjson.loads(file.read_bytes())
        except orjson.JSONDecodeError as error:
            raise DumpError(f'the dump at "{self.path}" has an invalid `{name}`: {error}') from None

    def _lines(self, name: str) -> Iterator[dict[str, Any]]:
        file = self.root / name
        if not file.is_file():
            return
        with file.open("rb") as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    try:
                        yield orjson.loads(line)
                    except orjson.JSONDecodeError as error:
                        raise DumpError(
                            f'the dump at "{self.path}" has an invalid line {number} in `{name}`: {error}'
                        ) from None

    def instance_uid(self) -> str | None:
        file = self.root / "instance-uid"
        return file.read_text().strip() or None if file.is_file() else None

    def api_keys(self) -> list[dict[str, Any]]:
        return list(self._lines("keys.jsonl"))

    def features(self) -> dict[str, Any]:
        return dict(self._json("experimental-features.json", {}))

    def webhooks(self) -> dict[str, dict[str, Any]]:
        """Runtime webhooks by uuid: ``{url, headers}``."""
        return dict(self._json("webhooks.json", {"webhooks": {}}).get("webhooks", {}))

    def network(self) -> dict[str, Any] | None:
        return self._json("network.json", {}) or None

    def tasks(self) -> Iterator[dict[str, Any]]:
        return self._lines("tasks/queue.jsonl")

    def batches(self) -> Iterator[dict[str, Any]]:
        return self._lines("batches/queue.jsonl")

    def update_file(self, task_uid: int) -> Path | None:
        """The payload of a task still enqueued (NDJSON), if the dump holds one."""
        for name in (f"{task_uid}.jsonl", str(task_uid)):
            file = self.root / "tasks" / "update_files" / name
            if file.is_file():
                return file
        return None

    def indexes(self) -> list[IndexDump]:
        folder = self.root / "indexes"
        if not folder.is_dir():
            return []
        found = []
        for directory in sorted(folder.iterdir()):
            metadata = self._json(f"indexes/{directory.name}/metadata.json")
            settings = self._json(f"indexes/{directory.name}/settings.json")
            found.append(IndexDump(metadata["uid"], metadata, settings, directory / "documents.jsonl"))
        return found
