"""The data directory lock (``common/data_lock.py``): refused at once while its launcher lives, waited
for while a dead launcher's children are stopping, free again once every holder has closed it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from common.data_lock import LOCK_FILE, DataDirectoryInUse, join_data_directory, lock_data_directory


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_held_directory_is_refused_at_once_naming_the_live_launcher(tmp_path: Path) -> None:
    held = lock_data_directory(tmp_path)
    try:
        assert (tmp_path / LOCK_FILE).read_text() == f"{os.getpid()}\n"
        started = time.monotonic()
        with pytest.raises(DataDirectoryInUse, match=f"launcher pid {os.getpid()}"):
            lock_data_directory(tmp_path, wait=5.0)
        assert time.monotonic() - started < 1.0  # the holder is alive: no waiting
    finally:
        os.close(held)
    os.close(lock_data_directory(tmp_path))  # closed by its last holder: free again


def test_the_children_of_a_dead_launcher_are_waited_for(tmp_path: Path) -> None:
    held = lock_data_directory(tmp_path)
    (tmp_path / LOCK_FILE).write_text(f"{_dead_pid()}\n")  # as if its launcher had been killed
    release = threading.Timer(0.3, os.close, [held])
    release.start()
    started = time.monotonic()
    fd = lock_data_directory(tmp_path, wait=5.0)
    try:
        assert 0.25 <= time.monotonic() - started < 5.0
        assert (tmp_path / LOCK_FILE).read_text() == f"{os.getpid()}\n"
    finally:
        os.close(fd)
        release.join()


def test_waiting_for_a_dead_launcher_ends(tmp_path: Path) -> None:
    held = lock_data_directory(tmp_path)
    try:
        (tmp_path / LOCK_FILE).write_text(f"{_dead_pid()}\n")
        started = time.monotonic()
        with pytest.raises(DataDirectoryInUse, match="is in use by another Sift"):
            lock_data_directory(tmp_path, wait=0.3)
        assert time.monotonic() - started >= 0.3
    finally:
        os.close(held)


def test_roles_started_alone_share_the_directory_and_refuse_a_launcher(tmp_path: Path) -> None:
    held = join_data_directory(tmp_path, "gateway") + join_data_directory(tmp_path, "shard-0")
    try:
        with pytest.raises(DataDirectoryInUse, match="already has a running shard-0"):
            join_data_directory(tmp_path, "shard-0")
        started = time.monotonic()
        with pytest.raises(DataDirectoryInUse, match="started without `sift serve`"):
            lock_data_directory(tmp_path, wait=5.0)
        assert time.monotonic() - started < 1.0
    finally:
        for fd in held:
            os.close(fd)
    os.close(lock_data_directory(tmp_path))  # their processes gone: free for a launcher


def test_a_role_started_alone_is_refused_while_a_launcher_holds_the_directory(tmp_path: Path) -> None:
    held = lock_data_directory(tmp_path)
    try:
        with pytest.raises(DataDirectoryInUse, match=f"launcher pid {os.getpid()}"):
            join_data_directory(tmp_path, "scheduler", wait=5.0)
    finally:
        os.close(held)
