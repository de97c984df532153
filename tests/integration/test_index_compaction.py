"""``POST /indexes/{uid}/compact`` (task ``indexCompaction``, core.md §3.4.3, §4.2, §3.15).

Every shard rewrites its store without free pages and swaps it in; the documents, the search results
and the task history must read the same afterwards.
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

HUMAN_SIZE = re.compile(r"\d+(\.\d{1,2})? (B|KiB|MiB|GiB)")
_UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def _bytes(human: str) -> float:
    number, unit = human.split()
    return float(number) * _UNITS[unit]


def _documents(round_: int, count: int = 600) -> list[dict[str, Any]]:
    words = (" ".join(f"w{n * round_ + k}" for k in range(40)) for n in range(count))
    return [{"id": n, "title": f"book {n} round {round_}", "body": body} for n, body in enumerate(words)]


def _all_documents(cluster: RunningCluster, uid: str) -> list[dict[str, Any]]:
    body = httpx.get(f"{cluster.url}/indexes/{uid}/documents", params={"limit": 10_000}).json()
    return list(body["results"])


def _search(cluster: RunningCluster, uid: str) -> dict[str, Any]:
    body = httpx.post(f"{cluster.url}/indexes/{uid}/search", json={"q": "book round 3", "limit": 50}).json()
    return {"hits": body["hits"], "estimatedTotalHits": body["estimatedTotalHits"]}


def _store_bytes(cluster: RunningCluster) -> int:
    return sum((cluster.layout.shard_dir(k) / "data.mdb").stat().st_size for k in range(2))


def test_compaction_shrinks_the_stores_and_keeps_documents_and_search(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("compact_books")
    for round_ in range(1, 4):
        wait_task(cluster, index.add_documents(_documents(round_)).task_uid)
    documents, search = _all_documents(cluster, "compact_books"), _search(cluster, "compact_books")
    assert len(documents) == 600 and search["hits"]
    before = _store_bytes(cluster)

    enqueued = index.compact()
    assert (enqueued.type, enqueued.status) == ("indexCompaction", "enqueued")
    assert enqueued.index_uid == "compact_books"
    task = wait_task(cluster, enqueued.task_uid)
    assert task["status"] == "succeeded", task
    assert list(task["details"]) == ["preCompactionSize", "postCompactionSize"]
    pre, post = task["details"]["preCompactionSize"], task["details"]["postCompactionSize"]
    assert HUMAN_SIZE.fullmatch(pre) and HUMAN_SIZE.fullmatch(post), task["details"]
    assert _bytes(post) < _bytes(pre)
    assert abs(_bytes(pre) - before) <= 0.01 * before
    assert _store_bytes(cluster) < before
    batch = httpx.get(f"{cluster.url}/batches/{task['batchUid']}").json()
    assert batch["details"] == task["details"]
    assert batch["batchStrategy"] == (
        f"created batch containing only task with id {task['uid']} of type `indexCompaction` "
        "that cannot be batched with any other task."
    )

    assert _all_documents(cluster, "compact_books") == documents
    assert _search(cluster, "compact_books") == search
    # The compacted stores take writes as before.
    wait_task(cluster, index.add_documents([{"id": 9999, "title": "after compaction"}]).task_uid)
    hits = httpx.post(f"{cluster.url}/indexes/compact_books/search", json={"q": "after compaction"}).json()
    assert [hit["id"] for hit in hits["hits"]] == [9999]
    assert not any((cluster.layout.shard_dir(k) / "compaction").exists() for k in range(2))


def test_compaction_runs_before_older_index_tasks(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("compact_order")
    busy = index.add_documents(_documents(1, count=4000))
    later = index.add_documents([{"id": 1, "title": "later"}])
    compaction = index.compact()
    done = wait_task(cluster, compaction.task_uid, timeout=60)
    later_done = wait_task(cluster, later.task_uid, timeout=60)
    assert wait_task(cluster, busy.task_uid)["status"] == "succeeded"
    assert done["status"] == later_done["status"] == "succeeded"
    assert done["batchUid"] < later_done["batchUid"]


def test_unknown_index_fails_the_task_and_a_bad_uid_is_refused(cluster: RunningCluster) -> None:
    response = httpx.post(f"{cluster.url}/indexes/compact_nowhere/compact", json={"ignored": True})
    assert response.status_code == 202
    summary = response.json()
    assert list(summary) == ["taskUid", "indexUid", "status", "type", "enqueuedAt"]
    task = wait_task(cluster, summary["taskUid"])
    assert task["status"] == "failed" and task["details"] == {}
    assert task["error"] == {
        "message": "Index `compact_nowhere` not found.",
        "code": "index_not_found",
        "type": "invalid_request",
        "link": "https://docs.meilisearch.com/errors#index_not_found",
    }
    refused = httpx.post(f"{cluster.url}/indexes/bad!uid/compact")
    assert refused.status_code == 400 and refused.json()["code"] == "invalid_index_uid"
