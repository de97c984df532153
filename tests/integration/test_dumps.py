"""``POST /dumps`` and Sift's own dumps imported back, through real clusters."""

from __future__ import annotations

import re
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.support.auth import MASTER_KEY, bearer, create_key, secured_cluster
from tests.support.client import client_for, wait_task
from tests.support.cluster import REPO_ROOT, RunningCluster

MOVIES = REPO_ROOT.parent / "shared" / "datasets" / "movies-1688" / "movies.json"
ADMIN = bearer(MASTER_KEY)
_DUMP_FILE = re.compile(r"^\d{8}-\d{9}\.dump$")


@pytest.fixture(scope="module")
def dump_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dumps")


@pytest.fixture(scope="module")
def source(dump_dir: Path) -> Iterator[RunningCluster]:
    """An instance with two indexes, nested documents, user-provided vectors, a key, a feature, a
    webhook, a failed task and a deletion."""
    with secured_cluster("--dump-dir", str(dump_dir)) as cluster:
        client = client_for(cluster, MASTER_KEY)
        movies = orjson.loads(MOVIES.read_bytes())[:300]
        tasks = [
            client.index("movies").add_documents(movies, primary_key="id").task_uid,
            client.index("movies")
            .update_settings(
                {
                    "filterableAttributes": ["genres"],
                    "synonyms": {"sf": ["science fiction"]},
                    "typoTolerance": {"minWordSizeForTypos": {"oneTypo": 4, "twoTypos": 9}},
                }
            )
            .task_uid,
            client.index("products")
            .update_settings({"embedders": {"manual": {"source": "userProvided", "dimensions": 2}}})
            .task_uid,
            client.index("products")
            .add_documents(
                [
                    {
                        "sku": "a",
                        "nested": {"colour": "red", "sizes": [1, 2]},
                        "_vectors": {"manual": [0.5, 0.25]},
                    },
                    {"sku": "b", "_vectors": {"manual": {"regenerate": False, "embeddings": [[1.0, 0.0]]}}},
                ],
                primary_key="sku",
            )
            .task_uid,
            client.index("movies").delete_documents([str(movies[0]["id"])]).task_uid,
            client.index("nowhere").delete_document("1").task_uid,
        ]
        for uid in tasks:
            wait_task(cluster, uid, key=MASTER_KEY, timeout=120)
        create_key(cluster, name="reader", actions=["search"], indexes=["products"], expiresAt=None)
        response = httpx.patch(
            f"{cluster.url}/experimental-features", json={"containsFilter": True}, headers=ADMIN
        )
        assert response.status_code == 200
        response = httpx.post(
            f"{cluster.url}/webhooks",
            json={"url": "http://127.0.0.1:9/hook", "headers": {"authorization": "secret"}},
            headers=ADMIN,
        )
        assert response.status_code == 201, response.text
        yield cluster


def _create_dump(cluster: RunningCluster) -> dict[str, Any]:
    task = client_for(cluster, MASTER_KEY).create_dump()
    return wait_task(cluster, task.task_uid, key=MASTER_KEY, timeout=120)


def test_post_dumps_enqueues_a_dump_creation_and_writes_the_file(
    source: RunningCluster, dump_dir: Path
) -> None:
    response = httpx.post(f"{source.url}/dumps", headers=ADMIN)
    assert response.status_code == 202
    summary = response.json()
    assert summary["type"] == "dumpCreation"
    assert summary["indexUid"] is None
    assert summary["status"] == "enqueued"
    task = wait_task(source, summary["taskUid"], key=MASTER_KEY, timeout=120)
    assert task["status"] == "succeeded", task
    dump_uid = task["details"]["dumpUid"]
    assert re.fullmatch(r"\d{8}-\d{9}", dump_uid)
    started = task["startedAt"]
    assert dump_uid == f"{started[0:4]}{started[5:7]}{started[8:10]}-{started[11:13]}{started[14:16]}" + (
        f"{started[17:19]}{(started[20:23] + '000')[:3]}"
    )
    dump = dump_dir / f"{dump_uid}.dump"
    assert dump.is_file()
    with tarfile.open(dump, "r:gz") as archive:
        names = set(archive.getnames())
    for name in (
        "metadata.json",
        "keys.jsonl",
        "experimental-features.json",
        "webhooks.json",
        "network.json",
        "tasks/queue.jsonl",
        "batches/queue.jsonl",
        "indexes/movies/documents.jsonl",
        "indexes/products/settings.json",
        "indexes/products/metadata.json",
    ):
        assert name in names
    assert not [p for p in dump_dir.iterdir() if not _DUMP_FILE.match(p.name)], "only complete dumps are left"


def test_post_dumps_needs_the_dumps_create_action(source: RunningCluster) -> None:
    assert httpx.post(f"{source.url}/dumps").status_code == 401
    searcher = create_key(source, actions=["search"], indexes=["*"])
    denied = httpx.post(f"{source.url}/dumps", headers=bearer(searcher["key"]))
    assert denied.status_code == 403
    assert denied.json()["code"] == "invalid_api_key"
    dumper = create_key(source, actions=["dumps.create"], indexes=["*"])
    allowed = httpx.post(f"{source.url}/dumps", headers=bearer(dumper["key"]))
    assert allowed.status_code == 202
    wait_task(source, allowed.json()["taskUid"], key=MASTER_KEY, timeout=120)


def _everything(cluster: RunningCluster) -> dict[str, Any]:
    def get(path: str) -> Any:
        response = httpx.get(f"{cluster.url}{path}", headers=ADMIN, timeout=30)
        assert response.status_code == 200, (path, response.text)
        return response.json()

    indexes = get("/indexes")["results"]
    state: dict[str, Any] = {
        "indexes": indexes,
        "keys": get("/keys?limit=100")["results"],
        "features": get("/experimental-features"),
        "webhooks": get("/webhooks")["results"],
        "tasks": get("/tasks?limit=1000")["results"],
    }
    for index in indexes:
        uid = index["uid"]
        state[f"settings {uid}"] = get(f"/indexes/{uid}/settings")
        state[f"documents {uid}"] = get(f"/indexes/{uid}/documents?limit=10000&retrieveVectors=true")
    return state


def _explicit(vectors: Any) -> dict[str, Any]:
    """One embedder's vectors in the explicit form, however they were sent: until stored vectors are
    shown by ``retrieveVectors``, documents show ``_vectors`` as sent, and a dump holds the explicit form."""
    if isinstance(vectors, dict):
        embeddings = vectors.get("embeddings", [])
        regenerate = vectors.get("regenerate", False)
    else:
        embeddings, regenerate = vectors, False
    if embeddings and not isinstance(embeddings[0], list):
        embeddings = [embeddings]
    return {"embeddings": embeddings, "regenerate": regenerate}


def test_round_trip_restores_every_index_setting_document_key_and_task(
    source: RunningCluster, dump_dir: Path
) -> None:
    task = _create_dump(source)
    assert task["status"] == "succeeded", task
    before = _everything(source)
    dump = dump_dir / f"{task['details']['dumpUid']}.dump"
    with secured_cluster("--import-dump", str(dump)) as imported:
        after = _everything(imported)
    # The dump's own task is written finished, outside any batch (as the reference writes it).
    dumped = next(t for t in after["tasks"] if t["uid"] == task["uid"])
    assert (dumped["type"], dumped["status"], dumped["details"]) == (
        "dumpCreation",
        "succeeded",
        task["details"],
    )
    after["tasks"] = [t for t in after["tasks"] if t["uid"] != task["uid"]]
    before["tasks"] = [t for t in before["tasks"] if t["uid"] != task["uid"]]
    # An unset `legacySearch` (null) is written `false`, as the reference writes it.
    before["features"]["legacySearch"] = bool(before["features"]["legacySearch"])
    for state in (before, after):
        for document in state["documents products"]["results"]:
            document["_vectors"] = {name: _explicit(value) for name, value in document["_vectors"].items()}
    assert after == before
    assert any(t["status"] == "failed" for t in after["tasks"])
    assert before["documents products"]["results"][0]["nested"] == {"colour": "red", "sizes": [1, 2]}


def test_kill_9_during_a_dump_leaves_no_partial_file_and_the_dump_completes(tmp_path: Path) -> None:
    dump_dir = tmp_path / "dumps"
    with secured_cluster("--dump-dir", str(dump_dir)) as cluster:
        client = client_for(cluster, MASTER_KEY)
        movies = orjson.loads(MOVIES.read_bytes())
        uids = [client.index(f"m{k}").add_documents(movies, primary_key="id").task_uid for k in range(3)]
        for uid in uids:
            wait_task(cluster, uid, key=MASTER_KEY, timeout=300)
        task_uid = client.create_dump().task_uid
        deadline = time.monotonic() + 60
        while not (dump_dir.is_dir() and any(p.name.endswith(".dump.work") for p in dump_dir.iterdir())):
            assert time.monotonic() < deadline, "the dump never started"
            time.sleep(0.005)
        old = cluster.kill_backend("scheduler")
        assert not [p for p in dump_dir.iterdir() if p.name.endswith(".dump")], "no dump may be visible yet"
        cluster.wait_replaced("scheduler", old)
        task = wait_task(cluster, task_uid, key=MASTER_KEY, timeout=120)
        assert task["status"] == "succeeded", task
        left = sorted(p.name for p in dump_dir.iterdir())
        assert left == [f"{task['details']['dumpUid']}.dump"]
        with tarfile.open(dump_dir / left[0], "r:gz") as archive:
            member = archive.extractfile("indexes/m2/documents.jsonl")
            assert member is not None
            assert len(member.read().splitlines()) == len(movies)


def test_a_task_enqueued_at_dump_time_runs_after_the_import(source: RunningCluster, dump_dir: Path) -> None:
    """A dump runs before other enqueued tasks (core.md §4.2): an addition still enqueued is written
    with its documents (an update file), and the importing instance runs it."""
    client = client_for(source, MASTER_KEY)
    busy = client.index("busy").add_documents(orjson.loads(MOVIES.read_bytes()), primary_key="id").task_uid
    late = client.index("late").add_documents([{"id": 7, "title": "enqueued"}], primary_key="id").task_uid
    task = _create_dump(source)
    assert task["status"] == "succeeded", task
    wait_task(source, busy, key=MASTER_KEY, timeout=300)
    dump = dump_dir / f"{task['details']['dumpUid']}.dump"
    with tarfile.open(dump, "r:gz") as archive:
        lines = [orjson.loads(line) for line in archive.extractfile("tasks/queue.jsonl").read().splitlines()]  # type: ignore[union-attr]
        assert next(line for line in lines if line["uid"] == late)["status"] == "enqueued"
        assert f"tasks/update_files/{late}.jsonl" in archive.getnames()
    with secured_cluster("--import-dump", str(dump)) as imported:
        finished = wait_task(imported, late, key=MASTER_KEY, timeout=120)
        assert finished["status"] == "succeeded", finished
        document = httpx.get(f"{imported.url}/indexes/late/documents/7", headers=ADMIN).json()
        assert document == {"id": 7, "title": "enqueued"}
