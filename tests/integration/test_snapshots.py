"""Snapshots through the real cluster: ``POST /snapshots``, ``--schedule-snapshot``, ``--import-snapshot``
and its launch rules (core.md §3.9; ``scheduler/snapshots.py``, ``sift/snapshot_import.py``)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import meilisearch
import pytest

from common.snapshot_archive import unpack
from tests.support.cluster import REPO_ROOT, RunningCluster, free_port
from tests.support.crash.api import wait_task

MASTER_KEY = "snapshot-master-key-0123456789"
AUTH = {"Authorization": f"Bearer {MASTER_KEY}"}
INDEX = "snap_movies"
SEARCHES: list[dict[str, Any]] = [
    {"q": "dark knight"},
    {"q": "lve", "limit": 5},
    {"q": "", "filter": "year > 1990", "sort": ["year:desc"], "facets": ["genre", "year"]},
    {"q": "the", "attributesToHighlight": ["title"], "showRankingScore": True},
    {"q": "movie", "filter": "genre = drama", "offset": 3, "limit": 4},
    {"q": '"the dark"', "matchingStrategy": "all"},
]


def _documents() -> list[dict[str, Any]]:
    words = ["dark", "knight", "love", "story", "the", "movie", "night", "river", "storm", "light"]
    return [
        {
            "id": n,
            "title": f"the {words[n % 10]} {words[(n * 3) % 10]} movie {n}",
            "genre": ["drama", "comedy", "action"][n % 3],
            "year": 1970 + n % 50,
            "cast": {"lead": f"actor {n % 17}", "others": [f"actor {(n + k) % 23}" for k in range(3)]},
        }
        for n in range(400)
    ]


def _wait(client: httpx.Client, uid: int) -> dict[str, Any]:
    task = wait_task(client, uid)
    assert task["status"] == "succeeded", task
    return task


def _snapshot(client: httpx.Client) -> dict[str, Any]:
    response = client.post("/snapshots")
    assert response.status_code == 202, response.text
    return _wait(client, response.json()["taskUid"])


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCluster]:
    snapshots = tmp_path_factory.mktemp("snapshots")
    with RunningCluster("--master-key", MASTER_KEY, "--snapshot-dir", str(snapshots)) as running:
        running.snapshot_dir = snapshots  # type: ignore[attr-defined]
        yield running


def _client(cluster: RunningCluster) -> httpx.Client:
    return httpx.Client(base_url=cluster.url, headers=AUTH, timeout=30)


def _state(client: httpx.Client) -> dict[str, Any]:
    """What a restored instance must answer alike: searches, documents, settings, keys, indexes, tasks."""
    return {
        "searches": [client.post(f"/indexes/{INDEX}/search", json=search).json() for search in SEARCHES],
        "documents": client.get(f"/indexes/{INDEX}/documents", params={"limit": 1000}).json(),
        "settings": client.get(f"/indexes/{INDEX}/settings").json(),
        "keys": client.get("/keys").json(),
        "indexes": client.get("/indexes").json(),
        "stats": client.get(f"/indexes/{INDEX}/stats").json(),
        "features": client.get("/experimental-features").json(),
        "tasks": client.get("/tasks", params={"limit": 1000}).json()["results"],
    }


def _without_times(search: dict[str, Any]) -> dict[str, Any]:
    """A search's answer less what differs between any two requests (its time, its request uid)."""
    return {name: value for name, value in search.items() if name not in ("processingTimeMs", "requestUid")}


def test_post_snapshots_writes_one_complete_file(original: RunningCluster) -> None:
    client = meilisearch.Client(original.url, MASTER_KEY)
    info = client.create_snapshot()
    assert info.index_uid is None and info.status == "enqueued" and info.type == "snapshotCreation"
    with _client(original) as http:
        task = _wait(http, info.task_uid)
        assert "details" not in task  # the reference omits the key (core.md §5)
        assert set(task) == {
            "uid", "batchUid", "indexUid", "status", "type", "canceledBy", "error", "duration",
            "enqueuedAt", "startedAt", "finishedAt",
        }  # fmt: skip
        batch = http.get(f"/batches/{task['batchUid']}").json()
        assert batch["details"] == {}
        assert batch["batchStrategy"] == (
            "stopped after the last task of type `snapshotCreation` because they cannot be batched with "
            "tasks of any other type."
        )
        # The body and query string are ignored, as the reference ignores them.
        response = http.post("/snapshots?x=1", content=b"not json", headers={"Content-Type": "text/plain"})
        assert response.status_code == 202
        assert set(response.json()) == {"taskUid", "indexUid", "status", "type", "enqueuedAt"}
        _wait(http, response.json()["taskUid"])
    files = sorted(path.name for path in original.snapshot_dir.iterdir())  # type: ignore[attr-defined]
    assert files == ["data.ms.snapshot"]


def test_snapshot_route_needs_the_snapshots_create_action(original: RunningCluster) -> None:
    with _client(original) as http:
        assert (
            http.post("/snapshots", headers={"Authorization": ""}).json()["code"]
            == "missing_authorization_header"
        )
        allowed = http.post(
            "/keys", json={"actions": ["snapshots.create"], "indexes": ["*"], "expiresAt": None}
        )
        other = http.post("/keys", json={"actions": ["dumps.create"], "indexes": ["*"], "expiresAt": None})
        star = http.post("/keys", json={"actions": ["snapshots.*"], "indexes": ["*"], "expiresAt": None})
        for key, status in ((allowed, 202), (star, 202), (other, 403)):
            response = httpx.post(
                f"{original.url}/snapshots", headers={"Authorization": f"Bearer {key.json()['key']}"}
            )
            assert response.status_code == status, response.text
            if status == 403:
                assert response.json()["code"] == "invalid_api_key"
                assert response.json()["type"] == "auth"
            else:
                _wait(http, response.json()["taskUid"])
        for key in (allowed, other, star):
            http.delete(f"/keys/{key.json()['uid']}")


def test_restored_instance_answers_as_the_original(original: RunningCluster, tmp_path: Path) -> None:
    client = meilisearch.Client(original.url, MASTER_KEY)
    index = client.index(INDEX)
    documents = _documents()
    client.wait_for_task(index.add_documents(documents[:300], "id").task_uid, 20_000)
    client.wait_for_task(index.update_documents(documents[300:]).task_uid, 20_000)
    client.wait_for_task(index.delete_documents(["5", "6"]).task_uid, 20_000)
    settings = {
        "filterableAttributes": ["genre", "year"],
        "sortableAttributes": ["year"],
        "synonyms": {"night": ["knight"]},
        "stopWords": ["a"],
        "typoTolerance": {"minWordSizeForTypos": {"oneTypo": 3, "twoTypos": 7}},
    }
    client.wait_for_task(index.update_settings(settings).task_uid, 20_000)
    client.create_key({"actions": ["search"], "indexes": [INDEX], "expiresAt": None, "name": "reader"})
    with _client(original) as http:
        before = _state(http)
        snapshot_task = _snapshot(http)
        # Changes after the snapshot must not be in it.
        later = index.add_documents([{"id": 9999, "title": "the dark knight rises"}])
        client.wait_for_task(later.task_uid, 20_000)
    snapshot = original.snapshot_dir / "data.ms.snapshot"  # type: ignore[attr-defined]
    with (
        RunningCluster(
            "--master-key", MASTER_KEY, "--import-snapshot", str(snapshot), data_dir=tmp_path / "restored"
        ) as restored,
        _client(restored) as http,
    ):
        after = _state(http)
        for got, wanted in zip(after["searches"], before["searches"], strict=True):
            assert _without_times(got) == _without_times(wanted)
        for part in ("documents", "settings", "keys", "indexes", "stats", "features"):
            assert after[part] == before[part], part
        restored_tasks = {task["uid"]: task for task in after["tasks"]}
        for task in before["tasks"]:
            assert restored_tasks[task["uid"]] == task
        shown = restored_tasks[snapshot_task["uid"]]
        assert shown["status"] == "succeeded" and shown["batchUid"] == snapshot_task["batchUid"]
        assert set(restored_tasks) == {t["uid"] for t in before["tasks"]} | {snapshot_task["uid"]}
        # The restored instance goes on: new tasks take the next uids, the snapshot is not taken again.
        response = http.post(f"/indexes/{INDEX}/documents", json=[{"id": 5000, "title": "x"}])
        assert response.json()["taskUid"] == snapshot_task["uid"] + 1
        _wait(http, response.json()["taskUid"])


def _launch(*options: str, db_path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A launch expected to be refused: it must exit by itself."""
    return subprocess.run(
        [
            sys.executable, "-m", "sift.cli", "serve", "--db-path", str(db_path),
            "--http-addr", f"127.0.0.1:{free_port()}", "--shards", "2", *options,
        ],
        cwd=cwd, env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def _some_snapshot(original: RunningCluster) -> Path:
    with _client(original) as http:
        _snapshot(http)
    return Path(original.snapshot_dir / "data.ms.snapshot")  # type: ignore[attr-defined]


def test_launch_rules(original: RunningCluster, tmp_path: Path) -> None:
    snapshot = _some_snapshot(original)
    missing = tmp_path / "nothing.snapshot"
    refused = _launch("--import-snapshot", str(missing), db_path=tmp_path / "a.ms", cwd=tmp_path)
    assert refused.returncode == 1 and f"snapshot doesn't exist at {missing}" in refused.stderr
    for flag in ("--ignore-missing-snapshot", "--ignore-snapshot-if-db-exists"):
        alone = _launch(flag, db_path=tmp_path / "b.ms", cwd=tmp_path)
        assert alone.returncode == 1 and "requires `import_snapshot`" in alone.stderr, alone.stderr
    # A missing snapshot ignored: a new, empty database.
    with RunningCluster(
        "--import-snapshot", str(missing), "--ignore-missing-snapshot", data_dir=tmp_path / "c.ms"
    ) as empty:
        assert httpx.get(f"{empty.url}/indexes").json()["total"] == 0
    # A database exists (c.ms): refused, or launched on it with the ignore flag.
    exists = _launch("--import-snapshot", str(snapshot), db_path=tmp_path / "c.ms", cwd=tmp_path)
    assert exists.returncode == 1
    assert f'database already exists at "{tmp_path / "c.ms"}"' in exists.stderr, exists.stderr
    with RunningCluster(
        "--import-snapshot", str(snapshot), "--ignore-snapshot-if-db-exists", data_dir=tmp_path / "c.ms"
    ) as kept:
        assert httpx.get(f"{kept.url}/indexes").json()["total"] == 0


@pytest.mark.parametrize("damage", ["truncated", "corrupted", "foreign"])
def test_a_damaged_snapshot_is_a_launch_error_and_restores_nothing(
    original: RunningCluster, tmp_path: Path, damage: str
) -> None:
    data = _some_snapshot(original).read_bytes()
    broken = tmp_path / "broken.snapshot"
    if damage == "truncated":
        broken.write_bytes(data[: len(data) * 2 // 3])
    elif damage == "corrupted":
        middle = len(data) // 2
        broken.write_bytes(
            data[:middle] + bytes(b ^ 0x5A for b in data[middle : middle + 64]) + data[middle + 64 :]
        )
    else:
        broken.write_bytes(b"PK\x03\x04 this is no snapshot")
    db_path = tmp_path / "restored.ms"
    result = _launch("--import-snapshot", str(broken), db_path=db_path, cwd=tmp_path)
    assert result.returncode == 1
    assert f"The snapshot `{broken}`" in result.stderr or f"The file `{broken}`" in result.stderr, (
        result.stderr
    )
    assert not (db_path / "scheduler").exists() and not (db_path / "shards").exists()
    assert not list(tmp_path.glob("*.import"))


def _instant(text: str) -> datetime:
    """An RFC 3339 time of a task or a log line (nanoseconds cut to microseconds)."""
    head, _, fraction = text.rstrip("Z").partition(".")
    return datetime.fromisoformat(f"{head}.{(fraction + '000000')[:6]}+00:00")


def test_scheduled_snapshots(tmp_path: Path) -> None:
    snapshots = tmp_path / "snapshots"
    with RunningCluster("--schedule-snapshot", "2", "--snapshot-dir", str(snapshots)) as running:
        started = time.monotonic()
        with httpx.Client(base_url=running.url) as http:
            while http.get("/tasks", params={"types": "snapshotCreation"}).json()["total"] < 2:
                assert time.monotonic() - started < 30, "no scheduled snapshots"
                time.sleep(0.1)
            tasks = http.get("/tasks", params={"types": "snapshotCreation", "from": 1}).json()["results"]
            first, second = sorted(tasks, key=lambda task: task["uid"])
            _wait(http, second["uid"])
        listening = next(line for line in running.output if "scheduler listening" in line)
        scheduler_start = _instant(listening.split()[0])
        # The first one interval after start, the next one interval later.
        assert (_instant(first["enqueuedAt"]) - scheduler_start).total_seconds() >= 1.9
        assert 1.9 <= (_instant(second["enqueuedAt"]) - _instant(first["enqueuedAt"])).total_seconds() < 4
        assert (snapshots / "data.ms.snapshot").is_file()
        assert not [path for path in snapshots.iterdir() if path.name != "data.ms.snapshot"]


def test_uncompacted_snapshot_restores_alike(tmp_path: Path) -> None:
    """``--experimental-no-snapshot-compaction``: the stores are copied page for page, free pages
    included (the data rewritten twice leaves some), and restore to the same answers."""
    snapshots = tmp_path / "snapshots"
    options = ("--master-key", MASTER_KEY, "--snapshot-dir", str(snapshots))
    with (
        RunningCluster(*options, "--experimental-no-snapshot-compaction") as running,
        _client(running) as http,
    ):
        for _ in range(2):
            _wait(http, http.post(f"/indexes/{INDEX}/documents", json=_documents()).json()["taskUid"])
        settings = {"filterableAttributes": ["genre", "year"], "sortableAttributes": ["year"]}
        _wait(http, http.patch(f"/indexes/{INDEX}/settings", json=settings).json()["taskUid"])
        before = _state(http)
        _snapshot(http)
    manifest = unpack(snapshots / "data.ms.snapshot", tmp_path / "unpacked")
    assert not manifest.compacted and manifest.shards == 2
    with RunningCluster(
        "--master-key", MASTER_KEY, "--import-snapshot", str(snapshots / "data.ms.snapshot"),
        data_dir=tmp_path / "restored",
    ) as restored, _client(restored) as http:  # fmt: skip
        after = _state(http)
    for got, wanted in zip(after["searches"], before["searches"], strict=True):
        assert _without_times(got) == _without_times(wanted)
    for part in ("documents", "settings", "keys", "indexes", "stats"):
        assert after[part] == before[part], part
