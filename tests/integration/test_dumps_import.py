"""``--import-dump`` of the reference's dump, and every launch rule of the import, through ``sift serve``."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.support.auth import bearer
from tests.support.cluster import REPO_ROOT, RunningCluster

REFERENCE_DUMP = REPO_ROOT.parent / "shared" / "datasets" / "meili-dumps" / "movies-products-v1.50.dump"
MASTER_KEY = "sift-reference-dump-master-key"
"""The master key of the instance that wrote the reference dump (its PROVENANCE.txt)."""
DATA = Path(__file__).parent / "data"
HEADERS = bearer(MASTER_KEY)


def _get(cluster: RunningCluster, path: str) -> Any:
    response = httpx.get(f"{cluster.url}{path}", headers=HEADERS, timeout=30)
    assert response.status_code == 200, (path, response.text)
    return response.json()


@pytest.fixture(scope="module")
def imported() -> Iterator[RunningCluster]:
    with RunningCluster("--import-dump", str(REFERENCE_DUMP), "--master-key", MASTER_KEY) as cluster:
        yield cluster


def test_the_instance_answers_only_once_the_dump_is_indexed(imported: RunningCluster) -> None:
    """The first answer already holds every document: nothing is left to index."""
    busy = _get(imported, "/tasks?statuses=enqueued,processing")
    assert busy["total"] == 0
    assert _get(imported, "/indexes/movies/stats")["numberOfDocuments"] == 1688
    assert _get(imported, "/indexes/products/stats")["numberOfDocuments"] == 3


def test_reference_dump_indexes_settings_and_documents(imported: RunningCluster) -> None:
    indexes = {index["uid"]: index for index in _get(imported, "/indexes")["results"]}
    assert {uid: index["primaryKey"] for uid, index in indexes.items()} == {"movies": "id", "products": "sku"}
    assert indexes["movies"]["createdAt"] == "2026-11-27T04:21:29.117026007Z"
    settings = _get(imported, "/indexes/movies/settings")
    assert settings["filterableAttributes"] == ["genres", "vote_average"]
    assert settings["sortableAttributes"] == ["title", "vote_average"]
    assert settings["searchableAttributes"] == ["title", "overview", "cast"]
    assert settings["synonyms"] == {"sf": ["science fiction"]}
    assert settings["stopWords"] == ["a", "the"]
    assert settings["typoTolerance"]["minWordSizeForTypos"] == {"oneTypo": 4, "twoTypos": 9}
    assert settings["pagination"] == {"maxTotalHits": 500}
    products = _get(imported, "/indexes/products/settings")
    assert products["embedders"] == {"manual": {"source": "userProvided", "dimensions": 3}}
    assert products["filterableAttributes"] == ["brand"]
    documents = _get(imported, "/indexes/products/documents?retrieveVectors=true")["results"]
    by_sku = {document["sku"]: document for document in documents}
    assert by_sku["b-2"]["nested"] == {"color": "blue", "sizes": [1, 2]}
    assert by_sku["c-3"]["name"] == "Café crème"
    assert by_sku["c-3"]["_geo"] == {"lat": 48.85, "lng": 2.35}
    vectors = by_sku["a-1"]["_vectors"]["manual"]
    assert vectors["regenerate"] is False
    # The same float32 values, however they are printed (0.1 or 0.10000000149011612).
    assert vectors["embeddings"] == [pytest.approx([0.1, 0.2, 0.3], rel=1e-7)]
    hits = httpx.post(
        f"{imported.url}/indexes/movies/search", json={"q": "sf", "filter": "genres = Drama"}, headers=HEADERS
    ).json()
    assert hits["hits"], "synonyms and filterable attributes work on the imported index"


def test_reference_dump_keys_and_tasks_are_those_the_reference_shows(imported: RunningCluster) -> None:
    """``data/`` holds what the reference 1.50 answers after importing the same dump."""
    expected_keys = orjson.loads((DATA / "movies-products-v1.50-keys.json").read_bytes())
    assert _get(imported, "/keys?limit=100")["results"] == expected_keys
    expected_tasks = orjson.loads((DATA / "movies-products-v1.50-tasks.json").read_bytes())
    assert _get(imported, "/tasks")["results"] == expected_tasks
    reader = next(key for key in expected_keys if key["name"] == "products search")
    search = httpx.post(
        f"{imported.url}/indexes/products/search", json={"q": "mug"}, headers=bearer(reader["key"])
    )
    assert search.status_code == 200
    assert [hit["sku"] for hit in search.json()["hits"]] == ["b-2"]


def _serve(db_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEARCH_")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "sift.cli",
            "serve",
            "--db-path",
            str(db_path),
            "--http-addr",
            "127.0.0.1:1",
            *args,
        ],
        cwd=db_path.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def existing_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database made by a previous launch, with one index."""
    db_path = tmp_path_factory.mktemp("existing") / "data.ms"
    with RunningCluster(data_dir=db_path) as cluster:
        task = httpx.post(f"{cluster.url}/indexes", json={"uid": "kept"}).json()
        while _task_status(cluster, task["taskUid"]) not in ("succeeded", "failed"):
            pass
    return db_path


def _task_status(cluster: RunningCluster, uid: int) -> str:
    return str(httpx.get(f"{cluster.url}/tasks/{uid}").json()["status"])


def test_an_existing_database_refuses_the_import(existing_db: Path) -> None:
    result = _serve(existing_db, "--import-dump", str(REFERENCE_DUMP))
    assert result.returncode == 1
    assert f'database already exists at "{existing_db}", try to delete it or rename it' in result.stderr


def test_an_existing_database_skips_the_import_when_told_to(existing_db: Path) -> None:
    options = ("--import-dump", str(REFERENCE_DUMP), "--ignore-dump-if-db-exists")
    with RunningCluster(*options, data_dir=existing_db) as cluster:
        assert [index["uid"] for index in httpx.get(f"{cluster.url}/indexes").json()["results"]] == ["kept"]


def test_a_missing_dump_refuses_the_launch(tmp_path: Path) -> None:
    missing = tmp_path / "missing.dump"
    result = _serve(tmp_path / "data.ms", "--import-dump", str(missing))
    assert result.returncode == 1
    assert f'dump doesn\'t exist at "{missing}"' in result.stderr
    assert not (tmp_path / "data.ms").exists()


def test_a_missing_dump_is_ignored_when_told_to(tmp_path: Path) -> None:
    options = ("--import-dump", str(tmp_path / "missing.dump"), "--ignore-missing-dump")
    with RunningCluster(*options, data_dir=tmp_path / "data.ms") as cluster:
        assert httpx.get(f"{cluster.url}/indexes").json()["total"] == 0


def test_ignore_flags_without_the_import_refuse_the_launch(tmp_path: Path) -> None:
    for flag in ("--ignore-missing-dump", "--ignore-dump-if-db-exists"):
        result = _serve(tmp_path / "data.ms", flag)
        assert result.returncode == 1
        assert "requires `import_dump`, which is not set" in result.stderr


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: data[:200] + bytes(len(data) - 200), id="corrupt"),
        pytest.param(lambda data: gzip.compress(b"not a tar archive"), id="not-a-tar"),
    ],
)
def test_a_damaged_dump_is_a_launch_error_and_leaves_no_database(tmp_path: Path, damage: Any) -> None:
    dump = tmp_path / "damaged.dump"
    dump.write_bytes(damage(REFERENCE_DUMP.read_bytes()))
    db_path = tmp_path / "data.ms"
    result = _serve(db_path, "--import-dump", str(dump))
    assert result.returncode == 1
    assert f'the dump at "{dump}" is corrupt or truncated' in result.stderr
    assert not db_path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged.dump"], "no staging directory is left"


def test_an_import_that_fails_midway_leaves_no_database(tmp_path: Path) -> None:
    """A dump whose documents the engine refuses stops after the indexes were being built: the
    staging directory goes, the database path stays free."""
    import tarfile

    source = tmp_path / "src"
    with tarfile.open(REFERENCE_DUMP, "r:gz") as archive:
        archive.extractall(source, filter="data")
    (source / "indexes" / "products" / "documents.jsonl").write_bytes(b'{"name": "no sku"}\n')
    dump = tmp_path / "bad-documents.dump"
    with tarfile.open(dump, "w:gz") as archive:
        for entry in sorted(source.iterdir()):
            archive.add(entry, arcname=entry.name)
    db_path = tmp_path / "data.ms"
    result = _serve(db_path, "--import-dump", str(dump))
    assert result.returncode == 1
    assert "importing index `products` failed" in result.stderr
    assert not db_path.exists()
    assert not (tmp_path / "data.ms.import").exists()


def test_kill_9_during_an_import_leaves_no_database_and_the_next_launch_imports(tmp_path: Path) -> None:
    db_path = tmp_path / "data.ms"
    cluster = RunningCluster(
        "--import-dump", str(REFERENCE_DUMP), "--master-key", MASTER_KEY, data_dir=db_path
    )
    env = {**cluster.env, "PYTHONPATH": str(REPO_ROOT)}
    launcher = subprocess.Popen(
        [sys.executable, "-m", "sift.cli", *cluster.args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    staging = tmp_path / "data.ms.import"
    try:
        deadline = time.monotonic() + 60
        while not (staging / "shards").is_dir():
            assert launcher.poll() is None and time.monotonic() < deadline, "the import never started"
            time.sleep(0.01)
        launcher.kill()
        launcher.wait()
        assert not db_path.exists(), "a killed import leaves no database"
    finally:
        if launcher.poll() is None:
            launcher.kill()
    with cluster:
        assert _get(cluster, "/indexes/movies/stats")["numberOfDocuments"] == 1688
    assert not staging.exists()
