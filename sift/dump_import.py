"""``--import-dump``: rebuild a database from a dump file (``docs/dump-format.md``)."""

from __future__ import annotations

from pathlib import Path

from common.config import Config
from sift.imports import ImportFailed


def import_dump(config: Config, dump: Path, staging: Path) -> None:
    """Build the database of ``dump`` in ``staging``."""
    raise ImportFailed(f"the dump at \"{dump}\" cannot be imported yet")
