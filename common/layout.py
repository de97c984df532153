"""Where each process keeps its files inside the data directory (``--db-path``).

The layout is the seam between processes: the launcher creates it, each process opens only its
own part, and the gateway finds every service's unix socket from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Linux limits sun_path to 108 bytes including the terminating NUL.
_MAX_SOCKET_PATH = 107


@dataclass(frozen=True)
class DataLayout:
    root: Path

    @property
    def run_dir(self) -> Path:
        """Unix sockets of the running cluster."""
        return self.root / "run"

    @property
    def scheduler_dir(self) -> Path:
        return self.root / "scheduler"

    def shard_dir(self, shard_id: int) -> Path:
        return self.root / "shards" / str(shard_id)

    def existing_shards(self) -> int:
        """How many shards the data directory already holds (``shards/0`` to ``shards/N-1``); 0 when new."""
        count = 0
        while self.shard_dir(count).is_dir():
            count += 1
        return count

    @property
    def scheduler_socket(self) -> Path:
        return self.run_dir / "scheduler.sock"

    def shard_socket(self, shard_id: int) -> Path:
        return self.run_dir / f"shard-{shard_id}.sock"

    def create(self) -> None:
        """Make the directories; fails early if socket paths would be too long for the kernel."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        probe = self.shard_socket(999)
        if len(str(probe.absolute())) > _MAX_SOCKET_PATH:
            raise ValueError(
                f"The database path `{self.root}` is too long: unix socket paths under it would exceed "
                f"{_MAX_SOCKET_PATH} bytes. Choose a shorter `--db-path`."
            )
