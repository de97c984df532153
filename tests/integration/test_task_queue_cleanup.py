"""The automatic task-queue cleanup (core.md §4.7): past 1,000,000 tasks, a ``taskDeletion`` of the oldest
finished ones is enqueued before the next batch, except under ``--experimental-replication-parameters``
(issue 19: task uids are then the replicas' business, and no task is deleted automatically).

A million real tasks would take minutes to register, so the stopped cluster's queue is padded: the
100,000 oldest tasks, those a cleanup deletes, are real records (finished index creations), the rest
only counted where the scheduler counts tasks (its status bitmaps). The same padded directory is then
run with the option, where no deletion may appear, and without it, where one must (after it the queue
is below the limit again).
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import orjson
from pyroaring import BitMap

from scheduler.store import SchedulerStore
from scheduler.tasks import new_record
from tests.support.client import wait_task
from tests.support.cluster import RunningCluster

_LIMIT = 1_000_000
_OLDEST = 100_000
REPLICATION = "--experimental-replication-parameters"


def _add(cluster: RunningCluster) -> int:
    response = httpx.post(f"{cluster.url}/indexes/books/documents", json=[{"id": 1}], timeout=30)
    assert response.status_code == 202, response.text
    uid: int = response.json()["taskUid"]
    assert wait_task(cluster, uid)["status"] == "succeeded"
    return uid


def _deletions(cluster: RunningCluster) -> list[dict[str, object]]:
    found: list[dict[str, object]] = httpx.get(
        f"{cluster.url}/tasks", params={"types": "taskDeletion"}
    ).json()["results"]
    return found


def _pad_queue(data_dir: Path) -> None:
    """A queue holding ``_LIMIT`` finished tasks as the scheduler counts them."""
    store = SchedulerStore(data_dir / "scheduler")
    now = time.time_ns()
    try:
        with store.write() as txn:
            for uid in range(_OLDEST):
                record = new_record(uid, "indexCreation", "padding", {"primaryKey": None}, {}, now, None)
                txn.put_task({**record, "status": "succeeded", "startedNs": now, "finishedNs": now})
        with store.write() as txn:
            txn.bitmaps["status:succeeded"] = store.bitmap("status:succeeded") | BitMap(range(_LIMIT))
            txn.set_meta("next_task_uid", _LIMIT)
    finally:
        store.close()


def test_no_automatic_deletion_with_replication_parameters(tmp_path: Path) -> None:
    data_dir = tmp_path / "data.ms"
    _pad_queue(data_dir)
    with RunningCluster(REPLICATION, data_dir=data_dir) as cluster:
        assert _add(cluster) == _LIMIT  # a batch ran on a full queue
        assert _add(cluster) == _LIMIT + 1
        assert _deletions(cluster) == []
    with RunningCluster(data_dir=data_dir) as cluster:
        _add(cluster)
        deletions = _deletions(cluster)
        assert len(deletions) == 1, orjson.dumps(deletions)
        details = deletions[0]["details"]
        assert isinstance(details, dict)
        assert details["originalFilter"].endswith("&statuses=succeeded,failed,canceled")
        assert wait_task(cluster, int(str(deletions[0]["uid"])))["details"]["deletedTasks"] == _OLDEST
