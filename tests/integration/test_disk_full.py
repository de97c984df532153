"""A full disk fails writes with the contract's error and loses nothing already acknowledged."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.client import wait_task
from tests.support.cluster import RunningCluster


@pytest.fixture
def small_disk() -> Iterator[Path]:
    mount_point = Path(tempfile.mkdtemp(prefix="sift-small-disk-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount_point)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {mounted.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)
        mount_point.rmdir()


def test_disk_full_fails_cleanly_and_keeps_earlier_documents(small_disk: Path) -> None:
    with RunningCluster(shards=2, data_dir=small_disk / "data.ms") as cluster:
        succeeded: set[int] = set()
        failure: dict | None = None
        for chunk in range(200):
            docs = [{"id": chunk * 500 + i, "text": os.urandom(300).hex()} for i in range(500)]
            response = httpx.post(f"{cluster.url}/indexes/full/documents", json=docs, timeout=60)
            if response.status_code != 202:
                failure = response.json()
                assert response.status_code == 422, response.text
                break
            task = wait_task(cluster, response.json()["taskUid"], timeout=60)
            if task["status"] != "succeeded":
                failure = task["error"]
                break
            succeeded.update(d["id"] for d in docs)
        assert failure is not None, "the disk never filled up"
        assert failure["code"] in ("no_space_left_on_device", "io_error"), failure
        assert failure["type"] == "system"
        assert httpx.get(f"{cluster.url}/health").status_code == 200
        stats = httpx.get(f"{cluster.url}/indexes/full/stats").json()
        # Known gap: shards commit independently, so when only one shard runs out of space the others
        # keep their part of the failed batch (up to one chunk more). Closing it needs a two-phase
        # commit (shards hold the prepared transaction until the scheduler decides).
        assert len(succeeded) <= stats["numberOfDocuments"] <= len(succeeded) + 500
        sample = max(succeeded)
        assert httpx.get(f"{cluster.url}/indexes/full/documents/{sample}").json()["id"] == sample
