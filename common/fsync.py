"""Making a file, or a rename inside a directory, durable before it is relied on."""

from __future__ import annotations

import os
from pathlib import Path


def fsync_path(path: Path) -> None:
    """``fsync`` a file (its contents) or a directory (the entries renamed or created in it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
