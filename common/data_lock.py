"""One Sift per data directory.

Two clusters on one directory would run two schedulers over one task queue and rebind each other's
unix sockets, so the directory's lock file is taken before anything runs there:

- ``sift serve`` takes it exclusively before it starts anything. Its children inherit the locked
  file (``pass_fds``): the lock lasts until the last process of the cluster has exited, whichever
  dies first, and the kernel drops it after a ``kill -9``.
- A role started on its own (``deploy/supervisord.conf``) takes it shared, so the roles of that
  cluster run side by side while a ``sift serve`` is refused, and takes its own role's lock file
  (``run/scheduler.lock``, ``run/shard-K.lock``) exclusively, so a second scheduler or shard K is.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from common.layout import DataLayout
from common.process import is_running

LOCK_FILE = "sift.lock"
RELEASE_WAIT = 15.0
"""How long a launcher waits for the children of a dead one to stop (they get SIGTERM when their
launcher dies, and the launcher itself gives children 10 s)."""


class DataDirectoryInUse(Exception):
    """Another running Sift holds the data directory."""


def lock_data_directory(root: Path, wait: float = RELEASE_WAIT) -> int:
    """Lock ``root`` for this cluster and return the locked file's descriptor, to pass to children.

    When the lock is held by a live launcher, or by roles started on their own, this fails at once.
    When its launcher is gone, its children are stopping: this waits up to ``wait`` seconds for them.
    """
    fd = _lock_file(root, fcntl.LOCK_EX, wait)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def join_data_directory(root: Path, role: str, wait: float = RELEASE_WAIT) -> list[int]:
    """Hold ``root`` for a role started without ``sift serve`` (``role``: ``scheduler``, ``shard-K``
    or ``gateway``); returns the locked descriptors, which the process keeps open until it exits.

    Refused at once when a live ``sift serve`` runs on ``root`` or the role already runs there; the
    children of a dead launcher are waited for as :func:`lock_data_directory` does.
    """
    run_dir = DataLayout(root).run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    shared = _lock_file(root, fcntl.LOCK_SH, wait)
    if role == "gateway":
        return [shared]  # gateways hold no data: several may serve one directory
    own = _open(run_dir / f"{role}.lock")
    try:
        fcntl.flock(own, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(own)
        os.close(shared)
        raise DataDirectoryInUse(
            f"The data directory `{root}` already has a running {role}. Stop it first, or choose "
            "another `--db-path`."
        ) from None
    return [shared, own]


def _open(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)


def _lock_file(root: Path, mode: int, wait: float) -> int:
    """The directory's lock file, locked in ``mode``."""
    fd = _open(root / LOCK_FILE)
    try:
        _wait_for_launcher(fd, root, mode, wait)
    except DataDirectoryInUse:
        os.close(fd)
        raise
    return fd


def _wait_for_launcher(fd: int, root: Path, mode: int, wait: float) -> None:
    """Take the lock in ``mode``, waiting only for a dead launcher's children to stop."""
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        if mode == fcntl.LOCK_EX and _only_shared_holders(fd):
            raise DataDirectoryInUse(
                f"The data directory `{root}` is in use by Sift processes started without `sift serve` "
                "(e.g. by supervisord). Stop them first, or choose another `--db-path`."
            )
        holder = _holder(fd)
        if (holder is not None and is_running(holder)) or time.monotonic() >= deadline:
            by = "another Sift" if holder is None else f"another Sift (launcher pid {holder})"
            raise DataDirectoryInUse(
                f"The data directory `{root}` is in use by {by}. Stop it first, or choose another "
                "`--db-path`."
            )
        time.sleep(0.1)


def _only_shared_holders(fd: int) -> bool:
    """Whether the lock is held, and only by roles started on their own (a launcher holds it
    exclusively). Leaves ``fd`` unlocked."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held = False  # released meanwhile: the caller's next attempt takes it
    except BlockingIOError:
        held = True
    fcntl.flock(fd, fcntl.LOCK_UN)
    return held


def _holder(fd: int) -> int | None:
    """The pid of the launcher that wrote the lock file, if it wrote one."""
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return int(text) if text.isdigit() else None
