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


def check_data_format(config: Config) -> int | None:
    """The older format awaiting the upgrade, or None when the directory is current.

    A directory without the file is new (it gets the current format), or was written before the
    file existed, by a Sift whose shards record the current format themselves (an older shard store
    is still refused by the shard's own check). Raises :class:`DataVersionError`."""
    root = config.db_path
    found = read_format(root)
    if found is None:
        write_format(root)
        return None
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


def upgraded(layout: DataLayout) -> bool:
    """Whether the ``upgradeDatabase`` task has brought the directory to the current format."""
    return read_format(layout.root) == CURRENT_FORMAT
