"""The dumpless upgrade through the real cluster, on a data directory of the previous format (4) that
the test makes from a current one: the postings values lose their START/WHOLE marks, as format 4 stored
them, the shards record format 4 and the directory's ``VERSION`` says 4.

Without ``--experimental-dumpless-upgrade`` the launch is refused with the reference's wording; with it
an ``upgradeDatabase`` task rebuilds the marks, and the tables and the search answers are those of the
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
import pytest

from common.data_version import CURRENT_FORMAT, read_format, version_file, write_format
from shard.index.env import FORMAT_VERSION, StoreEnv, encode_u32
from shard.index.postings import decode_bitmap, encode_bitmap
from tests.support.cluster import RunningCluster

INDEX = "objstore_upgrade"
QUERIES = ("carol", "blue", "the blue river", "rive", "night")
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
        index.search(query, {"showRankingScoreDetails": True, "limit": 40})["hits"] for query in QUERIES
    ]


def searchable_tables(data_dir: Path, shards: int) -> list[dict[bytes, bytes]]:
    tables = []
    for k in range(shards):
        env = StoreEnv(data_dir / "shards" / str(k), accept_older=True)
        with env.lmdb.begin() as txn:
            for table in (env.words, env.prefixes, env.stems):
                tables.append(dict(txn.cursor(table)))
        env.close()
    return tables


def make_format_4(data_dir: Path, shards: int) -> int:
    """Rewrite every postings value as format 4 stored it (documents only); return how many had marks."""
    marked = 0
    for k in range(shards):
        env = StoreEnv(data_dir / "shards" / str(k))
        with env.lmdb.begin(write=True) as txn:
            for table in (env.words, env.prefixes, env.stems):
                for key, value in list(txn.cursor(table)):
                    old = encode_bitmap(decode_bitmap(value))
                    marked += old != value
                    txn.put(key, old, db=table)
            txn.put(b"format-version", encode_u32(4), db=env.meta)
        env.close()
    write_format(data_dir, 4)
    return marked


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
    assert make_format_4(data_dir, 2) > 0, "without marked postings the test would mean nothing"
    assert searchable_tables(data_dir, 2) != tables
    # As a restored snapshot (the stores only) would be: the format is then read from the shards.
    version_file(data_dir).unlink()

    refused = RunningCluster(shards=2, data_dir=data_dir)
    with pytest.raises(RuntimeError) as failure:
        refused.start()
    refused.stop()
    output = str(failure.value)
    assert (
        "Your database version (format 4) is incompatible with your current engine version"
        f" (format {CURRENT_FORMAT})."
        in output
    )
    assert "set the `--experimental-dumpless-upgrade` flag" in output
    assert version_file(data_dir).read_text() == "4\n"

    with RunningCluster("--experimental-dumpless-upgrade", shards=2, data_dir=data_dir) as cluster:
        tasks = httpx.get(f"{cluster.url}/tasks", params={"types": "upgradeDatabase"}).json()["results"]
        assert len(tasks) == 1
        upgrade = tasks[0]
        assert (upgrade["status"], upgrade["indexUid"], upgrade["error"]) == ("succeeded", None, None)
        assert upgrade["details"] == {"upgradeFrom": "v4.0.0", "upgradeTo": f"v{CURRENT_FORMAT}.0.0"}
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
    make_format_4(data_dir, 2)

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
    assert read_format(data_dir) == 4, "killed after the upgrade finished: the test proved nothing"
    time.sleep(1)  # the children's deaths are asynchronous; the next launcher waits for their lock anyway

    with RunningCluster("--experimental-dumpless-upgrade", shards=2, data_dir=data_dir) as cluster:
        tasks = httpx.get(f"{cluster.url}/tasks", params={"types": "upgradeDatabase"}).json()["results"]
        assert [t["status"] for t in tasks] == ["succeeded"]  # the same task, re-run
        assert answers(cluster.url) == before
    assert read_format(data_dir) == CURRENT_FORMAT
    assert searchable_tables(data_dir, 2) == tables
