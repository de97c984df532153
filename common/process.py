"""Process lifecycle helpers shared by the gateway, the shards and the scheduler."""

from __future__ import annotations

import asyncio
import ctypes
import signal

_PR_SET_PDEATHSIG = 1


async def wait_for_stop_signal() -> None:
    """Return on SIGINT or SIGTERM, so that servers can stop gracefully."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def die_with_parent() -> None:
    """Ask Linux to SIGTERM this process when its parent dies (used as a ``preexec_fn``).

    A ``kill -9`` of the launcher must not leave orphaned workers holding the data directory.
    """
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a running process: not gone, and not a zombie (killed, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
