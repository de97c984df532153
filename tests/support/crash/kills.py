"""The ``kill -9`` of one child of the cluster and the wait until the launcher has brought it back.

Both scenarios (the random kill cycles and the bulk scheduler kills) kill processes the same way, so
the kill, its timing and the record of it (``Kill``) are kept here, apart from either scenario.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

from tests.support.cluster import RunningCluster


@dataclass
class Kill:
    cycle: int
    role: str
    old_pid: int
    new_pid: int | None
    at_write: int
    recovery_s: float | None

    @property
    def came_back(self) -> bool:
        return self.new_pid is not None and self.recovery_s is not None


def kill_and_recover(
    cluster: RunningCluster, role: str, timeout: float = 45.0
) -> tuple[int, int | None, float | None]:
    """SIGKILL ``role``; returns (old pid, new pid, seconds from kill to a healthy cluster)."""
    old_pid = cluster.child_pids()[role]
    os.kill(old_pid, signal.SIGKILL)
    killed_at = time.monotonic()
    new_pid = None
    while time.monotonic() - killed_at < timeout:
        pid = cluster.child_pids().get(role)
        if pid is not None and pid != old_pid:
            new_pid = pid
            break
        time.sleep(0.02)
    if new_pid is None:
        return old_pid, None, None
    while time.monotonic() - killed_at < timeout:
        try:
            cluster.wait_healthy(timeout=max(0.1, timeout - (time.monotonic() - killed_at)))
        except TimeoutError:
            return old_pid, new_pid, None
        if role == "gateway" or cluster.backend_pid(role) == new_pid:
            return old_pid, new_pid, time.monotonic() - killed_at
        time.sleep(0.02)
    return old_pid, new_pid, None
