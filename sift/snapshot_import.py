"""``--import-snapshot``: the database of a snapshot file (``common/snapshot_archive.py``), restored as is.

The launch rules and the atomic rename into ``--db-path`` are ``sift/imports.py``'s; this only unpacks
and checks the archive into the staging directory. The stores are the snapshot's own files, so the
restored cluster answers exactly as the original did when the snapshot was taken.
"""

from __future__ import annotations

from pathlib import Path

from common.config import Config
from common.snapshot_archive import SnapshotError, unpack
from sift.imports import ImportFailed


def import_snapshot(config: Config, snapshot: Path, staging: Path) -> None:
    """Unpack ``snapshot`` into ``staging``; a damaged, truncated or foreign file is refused whole."""
    try:
        manifest = unpack(snapshot, staging)
    except SnapshotError as error:
        raise ImportFailed(str(error)) from error
    if manifest.shards != config.shards:
        # The configuration loader takes the snapshot's shard count; this guards a mismatch anyway.
        raise ImportFailed(
            f"The snapshot `{snapshot}` holds {manifest.shards} shards, but the cluster is configured "
            f"with {config.shards}."
        )
