"""The dumpless upgrade through the real cluster, on a data directory of the previous format (5) that
the test makes from a current one: the prefixes table loses its three-character prefixes and the
impacts table its keys, as format 5 stored them, the shards record format 5 and the directory's
``VERSION`` says 5.

Without ``--experimental-dumpless-upgrade`` the launch is refused with the reference's wording; with it
an ``upgradeDatabase`` task rebuilds them, and the tables and the search answers are those of the
directory before it was made older.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import meilisearch
import orjson
import pytest

from common.data_version import CURRENT_FORMAT, read_format, version_file, write_format
from shard.index.env import FORMAT_VERSION, StoreEnv, encode_u32
from shard.index.postings import split_key
from tests.support.cluster import RunningCluster

INDEX = "objstore_upgrade"
QUERIES = ("carol", "blue", "the blue river", "rive", "night", "blu", "the riv")
DOCUMENTS = [
    {"id": 1, "title": "Carol", "overview": "A night by the blue river."},
    {"id": 2, "title": "Blue", "overview": "Carol walks at night."},
    {"id": 3, "title": "The Blue River", "overview": "Blue."},
    {"id": 4, "title": "River of night", "overview": "The carol of the blue birds."},
    {"id": 5, "title": "Night", "overview": "Rivers run blue."},
    *({"id": 10 + k, "title": f"Story {k}", "overview": f"blue carol {k} at night"} for k in range(30)),
]


def answers(url: str) -> list[dict[str, Any]]:
    index = meilisearch.Client(url).index(INDEX)
    return [
        index.search(query, {"showRankingScoreDetails": True, "limit": 40, **strategy})["hits"]
        for query in QUERIES
        # bm25's scores need the per-field word counts format 6 added to the index state.
        for strategy in ({}, {"matchingStrategy": "bm25"})
    ]


def searchable_tables(data_dir: Path, shards: int) -> list[dict[bytes, bytes]]:
    tables = []
    for k in range(shards):
        env = StoreEnv(data_dir / "shards" / str(k), accept_older=True)
        with env.lmdb.begin() as txn:
            for table in (env.words, env.prefixes, env.stems, env.impacts):
                tables.append(dict(txn.cursor(table)))
        env.close()
    return tables


def make_format_5(data_dir: Path, shards: int) -> int:
    """Rewrite the stores as format 5 held them: no impacts table (format 8), no three-character
    prefixes (format 7) and index states without the per-field word counts (format 6); return how many
    prefixes were removed."""
    removed = 0
    for k in range(shards):
        env = StoreEnv(data_dir / "shards" / str(k))
        with env.lmdb.begin(write=True) as txn:
            for key in [key for key, _ in txn.cursor(env.prefixes)]:
                if len(split_key(key)[0]) == 3:
                    txn.delete(key, db=env.prefixes)
                    removed += 1
            txn.drop(env.impacts, delete=False)  # emptied, not deleted: format 8 opens it
            for key, value in list(txn.cursor(env.index_state)):
                if key.endswith(b"stats"):
                    stats = orjson.loads(value)
                    assert stats.pop("fieldTokens"), "format 6 counts every field's words"
                    txn.put(key, orjson.dumps(stats), db=env.index_state)
            txn.put(b"format-version", encode_u32(5), db=env.meta)
        env.close()
    write_format(data_dir, 5)
    return removed


def test_format_constants_agree() -> None:
    assert CURRENT_FORMAT == FORMAT_VERSION


def test_an_older_directory_is_refused_then_upgraded_in_place(tmp_path: Path) -> None:
    data_dir = tmp_path / "data.ms"
    with RunningCluster(shards=2, data_dir=data_dir) as cluster:
        client = meilisearch.Client(cluster.url)
        client.index(INDEX).update_searchable_attributes(["title", "overview"])
        task = client.index(INDEX).add_documents(DOCUMENTS, primary_key="id")
        assert client.wait_for_task(task.task_uid, timeout_in_ms=60_000).status == "succeeded"
        before = answers(cluster.url)
    assert read_format(data_dir) == CURRENT_FORMAT  # written at the first start
    tables = searchable_tables(data_dir, 2)
    assert make_format_5(data_dir, 2) > 0, "without three-character prefixes the test would mean nothing"
    assert searchable_tables(data_dir, 2) != tables
    # As a restored snapshot (the stores only) would be: the format is then read from the shards.
    version_file(data_dir).unlink()

    refused = RunningCluster(shards=2, data_dir=data_dir)
    with pytest.raises(RuntimeError) as failure:
        refused.start()
    refused.stop()
    output = str(failure.value)
    assert (
        "Your database version (format 5) is incompatible with your current engine version "
        f"(format {CURRENT_FORMAT})." in output
    )
    assert "set the `--experimental-dumpless-upgrade` flag" in output
    assert version_file(data_dir).read_text() == "5\n"

    with RunningCluster("--experimental-dumpless-upgrade", shards=2, data_dir=data_dir) as cluster:
        tasks = httpx.get(f"{cluster.url}/tasks", params={"types": "upgradeDatabase"}).json()["results"]
        assert len(tasks) == 1
        upgrade = tasks[0]
        assert (upgrade["status"], upgrade["indexUid"], upgrade["error"]) == ("succeeded", None, None)
        assert upgrade["details"] == {"upgradeFrom": "v5.0.0", "upgradeTo": f"v{CURRENT_FORMAT}.0.0"}
        assert answers(cluster.url) == before
    assert read_format(data_dir) == CURRENT_FORMAT
    assert searchable_tables(data_dir, 2) == tables

    with RunningCluster(shards=2, data_dir=data_dir) as cluster:  # current now: no flag needed
        assert answers(cluster.url) == before
        tasks = httpx.get(f"{cluster.url}/tasks", params={"types": "upgradeDatabase"}).json()["results"]
        assert len(tasks) == 1


def test_a_newer_directory_is_refused(tmp_path: Path) -> None:
    data_dir = tmp_path / "data.ms"
    data_dir.mkdir()
    write_format(data_dir, CURRENT_FORMAT + 1)
    cluster = RunningCluster("--experimental-dumpless-upgrade", shards=1, data_dir=data_dir)
    with pytest.raises(RuntimeError, match=rf"is newer than this Sift's \(format {CURRENT_FORMAT}\)"):
        cluster.start()
    cluster.stop()


def test_kill_9_during_the_upgrade_then_the_next_launch_finishes_it(tmp_path: Path) -> None:
    data_dir = tmp_path / "data.ms"
    words = ["blue", "river", "night", "carol", "story", "stone", "north", "light", "field", "glass"]
    documents = [
        {"id": n, "title": words[n % 10], "overview": " ".join(words[(n * k) % 10] for k in range(1, 12))}
        for n in range(6000)
    ]
    with RunningCluster(shards=2, data_dir=data_dir) as cluster:
        client = meilisearch.Client(cluster.url)
        task = client.index(INDEX).add_documents(documents, primary_key="id")
        assert client.wait_for_task(task.task_uid, timeout_in_ms=120_000).status == "succeeded"
        before = answers(cluster.url)
    tables = searchable_tables(data_dir, 2)
    make_format_5(data_dir, 2)

    upgrading = RunningCluster("--experimental-dumpless-upgrade", shards=2, data_dir=data_dir)
    launcher = subprocess.Popen(
        [sys.executable, "-m", "sift.cli", *upgrading.args],
        env=upgrading.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    assert launcher.stdout is not None
    for line in launcher.stdout:  # the task is enqueued: the shards are rebuilding
        if b"database upgrade enqueued" in line:
            break
    launcher.kill()  # the children die with it (PR_SET_PDEATHSIG)
    launcher.wait()
    assert read_format(data_dir) == 5, "killed after the upgrade finished: the test proved nothing"
    time.sleep(1)  # the children's deaths are asynchronous; the next launcher waits for their lock anyway

    with RunningCluster("--experimental-dumpless-upgrade", shards=2, data_dir=data_dir) as cluster:
        tasks = httpx.get(f"{cluster.url}/tasks", params={"types": "upgradeDatabase"}).json()["results"]
        assert [t["status"] for t in tasks] == ["succeeded"]  # the same task, re-run
        assert answers(cluster.url) == before
    assert read_format(data_dir) == CURRENT_FORMAT
    assert searchable_tables(data_dir, 2) == tables
