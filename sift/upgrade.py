"""The launcher's check of the data directory's format (``common/data_version.py``) before anything starts.

An older directory is refused in the reference's words, unless ``--experimental-dumpless-upgrade``
is given: then the backends start on it, the scheduler enqueues an ``upgradeDatabase`` task that
comes before any other, and the gateway starts only once that task has brought the directory to the
current format, so no request reads the older layout.
"""

from __future__ import annotations

from common.config import Config
from common.data_version import (
    CURRENT_FORMAT,
    OLDEST_UPGRADABLE,
    DataVersionError,
    read_format,
    write_format,
)
from common.layout import DataLayout
from shard.index.env import StoreEnv, StoreFormatError


def check_data_format(config: Config) -> int | None:
    """The older format awaiting the upgrade, or None when the directory is current.

    A directory without the file is new, or was written before the file existed (or restored from a
    snapshot, which holds only the stores): it gets the oldest format its shards record. Raises
    :class:`DataVersionError`."""
    root = config.db_path
    found = read_format(root)
    if found is None:
        found = _shards_format(DataLayout(root))
        write_format(root, found)
    if found == CURRENT_FORMAT:
        return None
    if found > CURRENT_FORMAT:
        raise DataVersionError(
            f"Your database version (format {found}) is newer than this Sift's (format {CURRENT_FORMAT}): "
            f"start it with the Sift that wrote it."
        )
    if found < OLDEST_UPGRADABLE:
        raise DataVersionError(
            f"Your database version (format {found}) is incompatible with your current engine version "
            f"(format {CURRENT_FORMAT}), and too old to be upgraded in place (format {OLDEST_UPGRADABLE} "
            f"or later can be): export the documents with the Sift that wrote them and re-index them."
        )
    if not config.experimental_dumpless_upgrade:
        raise DataVersionError(
            f"Your database version (format {found}) is incompatible with your current engine version "
            f"(format {CURRENT_FORMAT}).\nTo migrate it, export the documents with the Sift that wrote "
            f"them and re-index them, or set the `--experimental-dumpless-upgrade` flag (or the "
            f"`SEARCH_EXPERIMENTAL_DUMPLESS_UPGRADE` environment variable) to upgrade the database on "
            f"startup."
        )
    return found


def _shards_format(layout: DataLayout) -> int:
    """The oldest format the shards' stores record (the current one when there is no shard yet)."""
    formats = [CURRENT_FORMAT]
    for k in range(layout.existing_shards()):
        try:
            env = StoreEnv(layout.shard_dir(k), accept_older=True)
        except StoreFormatError as error:
            raise DataVersionError(str(error)) from None
        with env.lmdb.begin() as txn:
            formats.append(env.stored_format(txn))
        env.close()
    return min(formats)


def upgraded(layout: DataLayout) -> bool:
    """Whether the ``upgradeDatabase`` task has brought the directory to the current format."""
    return read_format(layout.root) == CURRENT_FORMAT
