"""A snapshot carries each shard's vector checkpoints beside its LMDB copy (``shard/index/snapshot.py``):
the restored shards open their spaces from them, and show the same vectors and counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from common.snapshot_archive import unpack
from tests.support.cluster import RunningCluster
from tests.support.crash.api import wait_task

INDEX = "snap_vectors"
EMBEDDERS = {"e": {"source": "userProvided", "dimensions": 3}}


def _documents() -> list[dict[str, Any]]:
    return [{"id": n, "title": f"doc {n}", "_vectors": {"e": [1.0, n / 10, (n % 7) / 7]}} for n in range(60)]


def _state(http: httpx.Client) -> dict[str, Any]:
    return {
        "documents": http.get(
            f"/indexes/{INDEX}/documents", params={"limit": 100, "retrieveVectors": "true"}
        ).json(),
        "stats": http.get(f"/indexes/{INDEX}/stats").json(),
        "settings": http.get(f"/indexes/{INDEX}/settings/embedders").json(),
    }


def test_restored_vectors_come_from_the_snapshots_checkpoints(tmp_path: Path) -> None:
    snapshots = tmp_path / "snapshots"
    with (
        RunningCluster("--snapshot-dir", str(snapshots)) as running,
        httpx.Client(base_url=running.url, timeout=60) as http,
    ):
        # One after the other: a snapshot task is batched before enqueued index tasks.
        for send in (
            lambda: http.patch(f"/indexes/{INDEX}/settings", json={"embedders": EMBEDDERS}),
            lambda: http.post(f"/indexes/{INDEX}/documents", json=_documents()),
            lambda: http.post("/snapshots"),
        ):
            assert wait_task(http, send().json()["taskUid"])["status"] == "succeeded"
        before = _state(http)
    assert before["stats"]["numberOfEmbeddings"] == 60
    manifest = unpack(snapshots / "data.ms.snapshot", tmp_path / "unpacked")
    checkpoints = [name for name in manifest.files if "/vectors/" in name]
    assert {name.split("/")[1] for name in checkpoints} == {"0", "1"}, manifest.files
    with (
        RunningCluster(
            "--import-snapshot", str(snapshots / "data.ms.snapshot"), data_dir=tmp_path / "restored"
        ) as restored,
        httpx.Client(base_url=restored.url, timeout=60) as http,
    ):
        assert _state(http) == before
        opened = [line for line in restored.output if "vector space opened" in line]
    assert len(opened) == 2 and all("source=checkpoint" in line for line in opened), opened
