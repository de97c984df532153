"""The snapshot file (``<db dir name>.snapshot``): a tar stream of a data directory's stores, zstd-compressed.

The scheduler packs it (``scheduler/snapshots.py``); the launcher unpacks it (``--import-snapshot``) and
the configuration loader reads its manifest for the shard count. Members, in order:

- ``sift-snapshot.json``, the manifest: format version, shard count, whether the stores were compacted,
  and every file that follows with its size;
- ``scheduler/data.mdb``, then each ``shards/<k>/...`` file (the LMDB copy and what the shard keeps
  beside it, e.g. vector checkpoints).

The zstd frame carries a content checksum, and unpacking checks every member against the manifest, so
a truncated or corrupted file is refused as a whole (``SnapshotError``) instead of restoring part of it.
"""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

import orjson
import zstandard

FORMAT = 1
MANIFEST = "sift-snapshot.json"
COMPRESSION_LEVEL = 1
"""Stores are mostly postings and zstd-compressed documents: higher levels cost time for little (bench)."""
_CHUNK = 1 << 20


class SnapshotError(Exception):
    """The snapshot file cannot be restored; the message says which file and why."""


@dataclass(frozen=True)
class Manifest:
    shards: int
    compacted: bool
    files: dict[str, int]
    """Relative path (``scheduler/data.mdb``, ``shards/0/data.mdb``...) -> size in bytes."""

    def to_json(self) -> bytes:
        return orjson.dumps(
            {"format": FORMAT, "shards": self.shards, "compacted": self.compacted, "files": self.files}
        )


def snapshot_name(db_path: Path) -> str:
    """``data.ms`` -> ``data.ms.snapshot``, as the reference names it."""
    return f"{db_path.resolve().name}.snapshot"


def staged_files(root: Path) -> dict[str, int]:
    """Every regular file under ``root`` (a staged data directory), by relative POSIX path, sorted."""
    found = {
        path.relative_to(root).as_posix(): path.stat().st_size for path in root.rglob("*") if path.is_file()
    }
    return dict(sorted(found.items()))


def pack(root: Path, manifest: Manifest, out: IO[bytes], level: int = COMPRESSION_LEVEL) -> None:
    """Write the archive of ``root``'s files (as ``manifest`` lists them) to ``out``, which the caller
    makes durable."""
    compressor = zstandard.ZstdCompressor(level=level, write_checksum=True)
    with (
        compressor.stream_writer(out, closefd=False) as stream,
        tarfile.open(fileobj=stream, mode="w|") as tar,
    ):
        _add_bytes(tar, MANIFEST, manifest.to_json())
        for name, size in manifest.files.items():
            info = tarfile.TarInfo(name)
            info.size = size
            info.mode = 0o600
            with open(root / name, "rb") as file:
                tar.addfile(info, file)


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    tar.addfile(info, io.BytesIO(data))


@dataclass
class _Reader:
    tar: tarfile.TarFile
    members: Iterator[tarfile.TarInfo]


def read_manifest(path: Path) -> Manifest:
    """The manifest alone (the archive's first member): cheap, for the launch's shard count."""
    with path.open("rb") as raw:
        return _open(path, raw, lambda _manifest, _reader: None)


def unpack(path: Path, target: Path) -> Manifest:
    """Extract the archive into ``target`` (an empty directory) and check it is whole: every file
    the manifest lists, at its size, and a valid end of stream. Raises ``SnapshotError`` otherwise;
    ``target`` is then left for the caller to delete."""
    target.mkdir(parents=True, exist_ok=True)

    def extract(manifest: Manifest, reader: _Reader) -> None:
        seen: dict[str, int] = {}
        for member in reader.members:
            name = _safe_name(path, member)
            if name not in manifest.files or name in seen:
                raise SnapshotError(
                    f"The snapshot `{path}` holds `{name}`, which its manifest does not list."
                )
            source = reader.tar.extractfile(member)
            assert source is not None
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            with destination.open("wb") as file:
                while chunk := source.read(_CHUNK):
                    file.write(chunk)
                file.flush()
                os.fsync(file.fileno())
            seen[name] = destination.stat().st_size
        missing = [name for name, size in manifest.files.items() if seen.get(name) != size]
        if missing:
            raise SnapshotError(
                f"The snapshot `{path}` is incomplete: {', '.join(f'`{name}`' for name in missing)} "
                "missing or cut short."
            )

    with path.open("rb") as raw:
        manifest = _open(path, raw, extract)
    return manifest


def _open(path: Path, raw: IO[bytes], then: Any) -> Manifest:
    """Read the manifest, run ``then(manifest, reader)`` on the rest; every failure is a SnapshotError."""
    decompressor = zstandard.ZstdDecompressor()
    try:
        with (
            decompressor.stream_reader(raw, read_across_frames=True) as stream,
            tarfile.open(fileobj=stream, mode="r|") as tar,
        ):
            members = iter(tar)
            first = next(members, None)
            if first is None or first.name != MANIFEST:
                raise SnapshotError(f"The file `{path}` is not a Sift snapshot: it has no manifest.")
            manifest_file = tar.extractfile(first)
            assert manifest_file is not None
            manifest = _manifest(path, manifest_file.read())
            then(manifest, _Reader(tar, members))
    except SnapshotError:
        raise
    except (tarfile.TarError, zstandard.ZstdError, EOFError, OSError, ValueError) as error:
        raise SnapshotError(f"The snapshot `{path}` is damaged or truncated: {error}.") from error
    return manifest


def _manifest(path: Path, raw: bytes) -> Manifest:
    try:
        data = orjson.loads(raw)
        if data["format"] != FORMAT:
            raise SnapshotError(
                f"The snapshot `{path}` is in format {data['format']}; this Sift reads format {FORMAT}."
            )
        return Manifest(int(data["shards"]), bool(data["compacted"]), dict(data["files"]))
    except (orjson.JSONDecodeError, KeyError, TypeError) as error:
        raise SnapshotError(f"The snapshot `{path}` has an unreadable manifest: {error}.") from error


def _safe_name(path: Path, member: tarfile.TarInfo) -> str:
    """Only regular files under ``scheduler/`` or ``shards/``: never a link, an absolute path or ``..``."""
    name = PurePosixPath(member.name)
    if (
        not member.isfile()
        or name.is_absolute()
        or ".." in name.parts
        or name.parts[0] not in ("scheduler", "shards")
    ):
        raise SnapshotError(f"The snapshot `{path}` holds an unexpected entry `{member.name}`.")
    return name.as_posix()
