"""One Sift per data directory.

Two clusters on one directory would run two schedulers over one task queue and rebind each other's
unix sockets, so the launcher takes an exclusive lock on a file in the directory before it starts
anything. Its children inherit the locked file (``pass_fds``): the lock lasts until the last process
of the cluster has exited, whichever dies first, and the kernel drops it after a ``kill -9``.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from common.process import is_running

LOCK_FILE = "sift.lock"
RELEASE_WAIT = 15.0
"""How long a launcher waits for the children of a dead one to stop (they get SIGTERM when their
launcher dies, and the launcher itself gives children 10 s)."""


class DataDirectoryInUse(Exception):
    """Another running Sift holds the data directory."""


def lock_data_directory(root: Path, wait: float = RELEASE_WAIT) -> int:
    """Lock ``root`` for this cluster and return the locked file's descriptor, to pass to children.

    When the lock is held by a live launcher this fails at once. When its launcher is gone, its
    children are stopping: this waits up to ``wait`` seconds for them.
    """
    fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            holder = _holder(fd)
            if (holder is not None and is_running(holder)) or time.monotonic() >= deadline:
                os.close(fd)
                by = "another Sift" if holder is None else f"another Sift (launcher pid {holder})"
                raise DataDirectoryInUse(
                    f"The data directory `{root}` is in use by {by}. Stop it first, or choose another "
                    "`--db-path`."
                ) from None
            time.sleep(0.1)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _holder(fd: int) -> int | None:
    """The pid of the launcher that wrote the lock file, if it wrote one."""
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return int(text) if text.isdigit() else None
