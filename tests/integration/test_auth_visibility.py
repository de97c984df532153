"""Index visibility (core.md §3.7): list routes show an index-restricted key only its indexes, and
keys survive a restart and a ``kill -9`` of the scheduler."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import httpx
import meilisearch
import pytest

from tests.support.auth import MASTER_KEY, bearer, create_key, secured_cluster
from tests.support.cluster import RunningCluster


@pytest.fixture(scope="module")
def secured() -> Iterator[RunningCluster]:
    with secured_cluster() as cluster:
        admin = meilisearch.Client(cluster.url, MASTER_KEY)
        for uid in ("shop_fr", "shop_de", "internal"):
            admin.wait_for_task(admin.index(uid).add_documents([{"id": 1}]).task_uid)
        admin.wait_for_task(admin.swap_indexes([{"indexes": ["shop_fr", "shop_de"]}]).task_uid)
        yield cluster


def _get(cluster: RunningCluster, path: str, key: str) -> httpx.Response:
    return httpx.get(f"{cluster.url}{path}", headers=bearer(key))


def test_lists_show_only_the_keys_indexes(secured: RunningCluster) -> None:
    key = create_key(secured, actions=["*"], indexes=["shop_*"])["key"]
    indexes = _get(secured, "/indexes", key).json()
    assert [i["uid"] for i in indexes["results"]] == ["shop_de", "shop_fr"] and indexes["total"] == 2
    tasks = _get(secured, "/tasks", key).json()
    assert {t["indexUid"] for t in tasks["results"]} == {"shop_fr", "shop_de"}  # no global swap task
    assert tasks["total"] == 2
    every_task = _get(secured, "/tasks", MASTER_KEY).json()["results"]
    hidden = next(t for t in every_task if t["indexUid"] == "internal")
    assert _get(secured, f"/tasks/{hidden['uid']}", key).status_code == 404
    assert _get(secured, f"/batches/{hidden['batchUid']}", key).status_code == 404
    batches = _get(secured, "/batches", key).json()["results"]
    assert {uid for b in batches for uid in b["stats"]["indexUids"]} == {"shop_fr", "shop_de"}
    stats = _get(secured, "/stats", key).json()
    assert list(stats["indexes"]) == ["shop_de", "shop_fr"]
    assert list(_get(secured, "/stats", MASTER_KEY).json()["indexes"]) == ["internal", "shop_de", "shop_fr"]


def test_a_restricted_key_cannot_create_or_swap_other_indexes(secured: RunningCluster) -> None:
    key = create_key(secured, actions=["*"], indexes=["shop_*"])["key"]
    post = httpx.post(f"{secured.url}/indexes", json={"uid": "internal2"}, headers=bearer(key))
    assert post.status_code == 403
    assert (
        httpx.post(f"{secured.url}/indexes", json={"uid": "shop_it"}, headers=bearer(key)).status_code == 202
    )
    swap = [{"indexes": ["shop_fr", "internal"]}]
    assert httpx.post(f"{secured.url}/swap-indexes", json=swap, headers=bearer(key)).status_code == 403


def test_cancel_and_delete_touch_only_visible_tasks(secured: RunningCluster) -> None:
    key = create_key(secured, actions=["tasks.*"], indexes=["shop_*"])["key"]
    response = httpx.delete(f"{secured.url}/tasks?statuses=succeeded", headers=bearer(key))
    assert response.status_code == 200, response.text
    admin = meilisearch.Client(secured.url, MASTER_KEY)
    task = admin.wait_for_task(response.json()["taskUid"])
    remaining = {t.index_uid for t in admin.get_tasks({"statuses": ["succeeded"], "limit": 1000}).results}
    assert "internal" in remaining
    assert task.details is not None and task.details["deletedTasks"] >= 1


def test_keys_survive_kill_9_of_the_scheduler_and_gateway() -> None:
    with secured_cluster() as cluster:
        created = create_key(cluster, actions=["search"], indexes=["*"], name="durable")
        pids = cluster.child_pids()
        cluster.kill_backend("scheduler")  # right after the 201: the key must already be on disk
        cluster.wait_replaced("scheduler", pids["scheduler"])
        gateway = cluster.child_pids()["gateway"]
        os.kill(gateway, signal.SIGKILL)
        cluster.wait_replaced("gateway", gateway)  # the new gateway loads its keys from the scheduler
        fetched = httpx.get(f"{cluster.url}/keys/{created['uid']}", headers=bearer(MASTER_KEY))
        assert fetched.status_code == 200 and fetched.json() == created
        assert httpx.get(f"{cluster.url}/indexes/x/search", headers=bearer(created["key"])).status_code == 404


def test_keys_survive_a_restart_and_follow_the_master_key(tmp_path_factory: pytest.TempPathFactory) -> None:
    data_dir = tmp_path_factory.mktemp("keys") / "data.ms"
    with secured_cluster(data_dir=data_dir) as cluster:
        created = create_key(cluster, actions=["search"], indexes=["*"])
        httpx.delete(f"{cluster.url}/keys/{created['uid']}", headers=bearer(MASTER_KEY))
        kept = create_key(cluster, actions=["search"], indexes=["*"])
        before = {
            k["uid"] for k in httpx.get(f"{cluster.url}/keys", headers=bearer(MASTER_KEY)).json()["results"]
        }
    other_master = "another-master-key-0123456789"
    with RunningCluster("--master-key", other_master, data_dir=data_dir) as cluster:
        listed = httpx.get(f"{cluster.url}/keys", headers=bearer(other_master)).json()["results"]
        assert {k["uid"] for k in listed} == before  # defaults are not created again
        again = next(k for k in listed if k["uid"] == kept["uid"])
        assert again["key"] != kept["key"]  # the key value is derived from the master key
        search = f"{cluster.url}/indexes/x/search"
        assert httpx.get(search, headers=bearer(kept["key"])).status_code == 403
        assert httpx.get(search, headers=bearer(again["key"])).status_code == 404
