"""Index routes (core.md §3.2, §3.10) through the official client and raw HTTP."""

from __future__ import annotations

import httpx
import meilisearch
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster


def test_create_get_list_and_delete_an_index(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    task = client.create_index("books", {"primaryKey": "isbn"})
    assert task.status == "enqueued" and task.type == "indexCreation"
    assert wait_task(cluster, task.task_uid)["status"] == "succeeded"
    index = client.get_index("books")
    assert index.uid == "books" and index.primary_key == "isbn"
    raw = httpx.get(f"{cluster.url}/indexes/books").json()
    assert list(raw) == ["uid", "createdAt", "updatedAt", "primaryKey"]
    assert "books" in [i.uid for i in client.get_indexes()["results"]]
    done = wait_task(cluster, client.index("books").delete().task_uid)
    assert done["status"] == "succeeded" and done["details"] == {"deletedDocuments": 0}
    with pytest.raises(meilisearch.errors.MeilisearchApiError) as error:
        client.get_index("books")
    assert error.value.code == "index_not_found"
    assert error.value.status_code == 404


def test_creating_an_existing_index_fails_the_task(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    wait_task(cluster, client.create_index("twice").task_uid)
    failed = wait_task(cluster, client.create_index("twice").task_uid)
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == "index_already_exists"
    assert failed["error"]["message"] == "Index `twice` already exists."


def test_index_list_pagination_sorted_by_uid(cluster: RunningCluster) -> None:
    for uid in ("page-c", "page-a", "page-b"):
        wait_task(cluster, client_for(cluster).create_index(uid).task_uid)
    body = httpx.get(f"{cluster.url}/indexes", params={"offset": 1, "limit": 2}).json()
    assert list(body) == ["results", "offset", "limit", "total"]
    uids = [i["uid"] for i in httpx.get(f"{cluster.url}/indexes", params={"limit": 1000}).json()["results"]]
    assert uids == sorted(uids)
    assert body["offset"] == 1 and body["limit"] == 2 and len(body["results"]) == 2


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "missing_index_uid"),
        ({"uid": "bad uid!"}, "invalid_index_uid"),
        ({"uid": "ok", "primaryKey": 3}, "invalid_index_primary_key"),
        ({"uid": "ok", "doggo": 1}, "bad_request"),
    ],
)
def test_create_index_validation(cluster: RunningCluster, body: dict[str, object], code: str) -> None:
    response = httpx.post(f"{cluster.url}/indexes", json=body)
    assert response.status_code == 400
    assert response.json()["code"] == code


def test_invalid_uid_in_path_and_content_type_errors(cluster: RunningCluster) -> None:
    assert httpx.get(f"{cluster.url}/indexes/bad%20uid").json()["code"] == "invalid_index_uid"
    missing = httpx.post(f"{cluster.url}/indexes", content=b'{"uid": "x"}')
    assert missing.status_code == 415 and missing.json()["code"] == "missing_content_type"
    wrong = httpx.post(f"{cluster.url}/indexes", content=b"x", headers={"Content-Type": "text/plain"})
    assert wrong.status_code == 415 and wrong.json()["code"] == "invalid_content_type"


def test_update_primary_key_and_immutable_fields(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    wait_task(cluster, client.create_index("pk-change").task_uid)
    done = wait_task(cluster, client.index("pk-change").update(primary_key="sku").task_uid)
    assert done["status"] == "succeeded"
    assert client.get_index("pk-change").primary_key == "sku"
    response = httpx.patch(f"{cluster.url}/indexes/pk-change", json={"createdAt": "2020-01-01"})
    assert response.status_code == 400
    assert response.json()["code"] == "immutable_index_created_at"


def test_rename_moves_documents_and_task_history(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    wait_task(cluster, client.index("old-name").add_documents([{"id": 1, "a": "x"}]).task_uid)
    response = httpx.patch(f"{cluster.url}/indexes/old-name", json={"uid": "new-name"})
    assert response.status_code == 202
    done = wait_task(cluster, response.json()["taskUid"])
    assert done["status"] == "succeeded"
    assert done["details"] == {"primaryKey": None, "oldIndexUid": "old-name", "newIndexUid": "new-name"}
    assert client.index("new-name").get_document(1).a == "x"
    history = httpx.get(f"{cluster.url}/tasks", params={"indexUids": "new-name"}).json()["results"]
    assert {t["type"] for t in history} == {"documentAdditionOrUpdate", "indexUpdate"}


def test_swap_indexes_exchanges_documents(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    wait_task(cluster, client.index("swap-a").add_documents([{"id": 1, "side": "a"}]).task_uid)
    wait_task(cluster, client.index("swap-b").add_documents([{"id": 1, "side": "b"}]).task_uid)
    task = client.swap_indexes([{"indexes": ["swap-a", "swap-b"]}])
    done = wait_task(cluster, task.task_uid)
    assert done["status"] == "succeeded" and done["indexUid"] is None
    assert done["details"] == {"swaps": [{"indexes": ["swap-a", "swap-b"], "rename": False}]}
    assert client.index("swap-a").get_document(1).side == "b"
    assert client.index("swap-b").get_document(1).side == "a"


def test_swap_validation_errors(cluster: RunningCluster) -> None:
    one = httpx.post(f"{cluster.url}/swap-indexes", json=[{"indexes": ["x"]}])
    assert one.json()["code"] == "invalid_swap_indexes"
    assert (
        one.json()["message"]
        == 'Two indexes must be given for each swap. The list `["x"]` contains 1 indexes.'
    )
    twice = httpx.post(f"{cluster.url}/swap-indexes", json=[{"indexes": ["x", "y"]}, {"indexes": ["x", "z"]}])
    assert twice.json()["code"] == "invalid_swap_duplicate_index_found"
    missing = httpx.post(f"{cluster.url}/swap-indexes", json=[{}])
    assert missing.json()["code"] == "missing_swap_indexes"
    failed = wait_task(
        cluster,
        httpx.post(f"{cluster.url}/swap-indexes", json=[{"indexes": ["nope-1", "nope-2"]}]).json()["taskUid"],
    )
    assert failed["error"]["code"] == "index_not_found"
    assert failed["error"]["message"] == "Indexes `nope-1`, `nope-2` not found."
