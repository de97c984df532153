"""Run ``deploy/supervisord.conf`` as shipped, under a real supervisord, on a temporary data directory.

Only the site-specific values of the file are replaced (data directory, HTTP address, supervisord's
control socket); each must occur in the file, so a change of its shape fails the test instead of
silently testing something else.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.cluster import REPO_ROOT, RunningCluster

CONFIG = REPO_ROOT / "deploy" / "supervisord.conf"
SHIPPED_DATA_DIR = "/var/lib/sift/data.ms"
SHIPPED_HTTP_ADDR = "0.0.0.0:7700"
SHIPPED_CONTROL_SOCKET = "/tmp/sift-supervisor.sock"


class SupervisedCluster(RunningCluster):
    """supervisord running the shipped configuration (two shards); stopped with SIGTERM, as the
    launcher is."""

    starter = "supervisord"

    def __init__(self) -> None:
        super().__init__(shards=2)
        self.config = self.workdir / "supervisord.conf"
        text = CONFIG.read_text()
        for shipped, ours in (
            (SHIPPED_DATA_DIR, str(self.data_dir)),
            (SHIPPED_HTTP_ADDR, f"127.0.0.1:{self.port}"),
            (SHIPPED_CONTROL_SOCKET, str(self.workdir / "supervisor.sock")),
        ):
            assert shipped in text, f"{CONFIG} no longer mentions {shipped}"
            text = text.replace(shipped, ours)
        self.config.write_text(text)
        # `sift` and `supervisorctl` come from this virtualenv, as after `pip install .` in one.
        self.env["PATH"] = f"{Path(sys.executable).parent}:{self.env.get('PATH', '')}"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "supervisor.supervisord", "-c", str(self.config)]

    def ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``supervisorctl`` with this configuration."""
        return subprocess.run(
            [sys.executable, "-m", "supervisor.supervisorctl", "-c", str(self.config), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
