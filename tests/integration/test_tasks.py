"""Tasks and batches (core.md §3.4, §3.5, §4): filters, seek pagination, batching, cancel, delete."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster


@pytest.fixture(scope="module")
def queue() -> Iterator[RunningCluster]:
    """A cluster of its own: these tests count tasks and must not see other modules' tasks."""
    with RunningCluster("--experimental-max-number-of-batched-tasks", "50", shards=2) as running:
        yield running


def _tasks(cluster: RunningCluster, **params: object) -> dict:
    response = httpx.get(f"{cluster.url}/tasks", params=params)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_task_object_shape_and_formats(queue: RunningCluster) -> None:
    task = wait_task(queue, client_for(queue).index("shape").add_documents([{"id": 1}]).task_uid)
    assert list(task) == [
        "uid",
        "batchUid",
        "indexUid",
        "status",
        "type",
        "canceledBy",
        "details",
        "error",
        "duration",
        "enqueuedAt",
        "startedAt",
        "finishedAt",
    ]
    assert task["duration"].startswith("PT") and task["duration"].endswith("S")
    assert task["enqueuedAt"].endswith("Z") and task["finishedAt"] >= task["startedAt"] >= task["enqueuedAt"]
    missing = httpx.get(f"{queue.url}/tasks/999999")
    assert missing.status_code == 404 and missing.json()["message"] == "Task `999999` not found."
    bad = httpx.get(f"{queue.url}/tasks/abc").json()
    assert bad["code"] == "invalid_task_uids"
    assert bad["message"] == "Task uid `abc` is invalid. It should only contain numeric characters."


def test_custom_metadata_is_echoed(queue: RunningCluster) -> None:
    response = httpx.post(
        f"{queue.url}/indexes/meta/documents", json=[{"id": 1}], params={"customMetadata": "import-42"}
    )
    assert response.json()["customMetadata"] == "import-42"
    assert wait_task(queue, response.json()["taskUid"])["customMetadata"] == "import-42"


def test_filters_select_the_right_tasks(queue: RunningCluster) -> None:
    client = client_for(queue)
    ok = wait_task(queue, client.index("filter-a").add_documents([{"id": 1}]).task_uid)
    bad = wait_task(queue, client.index("filter-b").delete_document(1).task_uid)
    assert bad["status"] == "failed"
    by_index = _tasks(queue, indexUids="filter-a")["results"]
    assert [t["uid"] for t in by_index] == [ok["uid"]]
    failed = {t["uid"] for t in _tasks(queue, statuses="failed", limit=1000)["results"]}
    assert bad["uid"] in failed and ok["uid"] not in failed
    by_type = _tasks(queue, types="documentDeletion", indexUids="filter-a,filter-b")["results"]
    assert [t["uid"] for t in by_type] == [bad["uid"]]
    by_uid = _tasks(queue, uids=f"{ok['uid']},{bad['uid']}")["results"]
    assert [t["uid"] for t in by_uid] == [bad["uid"], ok["uid"]]
    by_batch = _tasks(queue, batchUids=ok["batchUid"])["results"]
    assert ok["uid"] in [t["uid"] for t in by_batch]
    after = _tasks(queue, afterEnqueuedAt=ok["enqueuedAt"], indexUids="filter-a,filter-b")["results"]
    assert [t["uid"] for t in after] == [bad["uid"]], "date bounds are exclusive"
    before = _tasks(queue, beforeEnqueuedAt="2000-01-01")
    assert before["results"] == [] and before["total"] == 0


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"limit": "x"}, "invalid_task_limit"),
        ({"from": "-1"}, "invalid_task_from"),
        ({"statuses": "done"}, "invalid_task_statuses"),
        ({"types": "doggo"}, "invalid_task_types"),
        ({"indexUids": "bad uid"}, "invalid_index_uid"),
        ({"uids": "a"}, "invalid_task_uids"),
        ({"afterEnqueuedAt": "yesterday"}, "invalid_task_after_enqueued_at"),
        ({"reverse": "maybe"}, "invalid_task_reverse"),
        ({"doggo": "1"}, "bad_request"),
    ],
)
def test_filter_validation(queue: RunningCluster, params: dict[str, str], code: str) -> None:
    response = httpx.get(f"{queue.url}/tasks", params=params)
    assert response.status_code == 400
    assert response.json()["code"] == code


def test_seek_pagination_walks_every_task_once(queue: RunningCluster) -> None:
    client = client_for(queue)
    last = None
    for i in range(7):
        last = client.index("pages").add_documents([{"id": i}]).task_uid
    assert last is not None
    wait_task(queue, last)
    seen: list[int] = []
    page = _tasks(queue, indexUids="pages", limit=3)
    assert page["total"] == 7 and page["limit"] == 3
    while True:
        seen += [t["uid"] for t in page["results"]]
        if page["next"] is None:
            break
        page = _tasks(queue, indexUids="pages", limit=3, **{"from": page["next"]})
    assert seen == sorted(seen, reverse=True) and len(seen) == 7
    reverse = _tasks(queue, indexUids="pages", limit=100, reverse="true")["results"]
    assert [t["uid"] for t in reverse] == sorted(seen)


def test_additions_to_one_index_are_auto_batched(queue: RunningCluster) -> None:
    blocker = client_for(queue).index("batch-blocker").add_documents([{"id": i} for i in range(20000)])
    uids = [client_for(queue).index("batched").add_documents([{"id": i}]).task_uid for i in range(5)]
    tasks = [wait_task(queue, uid) for uid in uids]
    wait_task(queue, blocker.task_uid)
    assert {t["status"] for t in tasks} == {"succeeded"}
    assert len({t["batchUid"] for t in tasks}) == 1, (
        "the five additions queued behind another index form one batch"
    )
    batch = httpx.get(f"{queue.url}/batches/{tasks[0]['batchUid']}").json()
    assert batch["stats"]["totalNbTasks"] == 5
    assert batch["stats"]["types"] == {"documentAdditionOrUpdate": 5}
    assert batch["details"] == {"receivedDocuments": 5, "indexedDocuments": 5}
    assert batch["batchStrategy"] == "batched all enqueued tasks for index `batched`"
    assert list(batch) == [
        "uid",
        "progress",
        "details",
        "stats",
        "duration",
        "startedAt",
        "finishedAt",
        "batchStrategy",
    ]
    listed = httpx.get(f"{queue.url}/batches", params={"uids": uids[0]}).json()
    assert [b["uid"] for b in listed["results"]] == [batch["uid"]]
    assert httpx.get(f"{queue.url}/batches/424242").json()["code"] == "batch_not_found"


def test_cancel_enqueued_tasks(queue: RunningCluster) -> None:
    client = client_for(queue)
    blocker = client.index("cancel-blocker").add_documents([{"id": i, "t": "x" * 50} for i in range(30000)])
    victims = [client.index("cancel-me").add_documents([{"id": i}]).task_uid for i in range(3)]
    response = httpx.post(f"{queue.url}/tasks/cancel", params={"indexUids": "cancel-me"})
    assert response.status_code == 200
    cancel = wait_task(queue, response.json()["taskUid"])
    wait_task(queue, blocker.task_uid)
    assert cancel["status"] == "succeeded" and cancel["type"] == "taskCancelation"
    assert cancel["details"] == {
        "matchedTasks": 3,
        "canceledTasks": 3,
        "originalFilter": "?indexUids=cancel-me",
    }
    for uid in victims:
        task = wait_task(queue, uid)
        assert task["status"] == "canceled" and task["canceledBy"] == cancel["uid"]
        # As in the reference: a canceled task joins the cancelation's batch and takes its times.
        assert task["batchUid"] == cancel["batchUid"]
        assert (task["startedAt"], task["finishedAt"]) == (cancel["startedAt"], cancel["finishedAt"])
    assert [t["uid"] for t in _tasks(queue, canceledBy=cancel["uid"])["results"]] == sorted(
        victims, reverse=True
    )
    assert {t["uid"] for t in _tasks(queue, batchUids=cancel["batchUid"])["results"]} == {
        cancel["uid"],
        *victims,
    }
    batch = httpx.get(f"{queue.url}/batches/{cancel['batchUid']}").json()
    assert batch["stats"]["totalNbTasks"] == 4
    assert batch["stats"]["status"] == {"canceled": 3, "succeeded": 1}
    assert batch["stats"]["types"] == {"documentAdditionOrUpdate": 3, "taskCancelation": 1}
    assert batch["stats"]["indexUids"] == {"cancel-me": 3}
    assert batch["details"] == {
        "receivedDocuments": 3,
        "indexedDocuments": 0,
        "matchedTasks": 3,
        "canceledTasks": 3,
        "originalFilter": "?indexUids=cancel-me",
    }


def test_cancel_a_processing_task_rolls_it_back(queue: RunningCluster) -> None:
    client = client_for(queue)
    big = client.index("cancel-processing").add_documents(
        [{"id": i, "text": "lorem ipsum " * 20} for i in range(150000)]
    )
    while _tasks(queue, uids=big.task_uid)["results"][0]["status"] == "enqueued":
        pass
    response = httpx.post(f"{queue.url}/tasks/cancel", params={"uids": big.task_uid})
    cancel = wait_task(queue, response.json()["taskUid"], timeout=120)
    task = wait_task(queue, big.task_uid, timeout=120)
    if task["status"] == "succeeded":
        pytest.skip("the batch committed on every shard before the cancelation arrived (machine too fast)")
    assert task["status"] == "canceled" and cancel["details"]["canceledTasks"] == 1
    assert httpx.get(f"{queue.url}/indexes/cancel-processing/documents").json().get("total", 0) == 0


def test_cancel_and_delete_need_a_filter(queue: RunningCluster) -> None:
    for method in ("POST", "DELETE"):
        path = "/tasks/cancel" if method == "POST" else "/tasks"
        response = httpx.request(method, f"{queue.url}{path}")
        assert response.status_code == 400 and response.json()["code"] == "missing_task_filters"
    assert httpx.post(f"{queue.url}/tasks/cancel", params={"limit": "1"}).json()["code"] == "bad_request"


def test_delete_finished_tasks(queue: RunningCluster) -> None:
    done = wait_task(queue, client_for(queue).index("deleted-tasks").add_documents([{"id": 1}]).task_uid)
    response = httpx.delete(f"{queue.url}/tasks", params={"uids": done["uid"]})
    assert response.status_code == 200 and response.json()["type"] == "taskDeletion"
    deletion = wait_task(queue, response.json()["taskUid"])
    assert deletion["details"] == {
        "matchedTasks": 1,
        "deletedTasks": 1,
        "originalFilter": f"?uids={done['uid']}",
    }
    assert httpx.get(f"{queue.url}/tasks/{done['uid']}").status_code == 404


def test_a_failed_task_does_not_stall_the_batch_after_it(queue: RunningCluster) -> None:
    client = client_for(queue)
    blocker = client.index("mixed-blocker").add_documents([{"id": i} for i in range(20000)])
    bad = client.index("mixed").add_documents([{"id": "not valid!"}], primary_key="id")
    good = client.index("mixed").add_documents([{"id": 1}, {"id": 2}], primary_key="id")
    wait_task(queue, blocker.task_uid)
    failed, succeeded = wait_task(queue, bad.task_uid), wait_task(queue, good.task_uid)
    assert failed["status"] == "failed" and succeeded["status"] == "succeeded"
    assert failed["batchUid"] == succeeded["batchUid"]
    batch = httpx.get(f"{queue.url}/batches/{failed['batchUid']}").json()
    assert batch["details"] == {"receivedDocuments": 3, "indexedDocuments": 2}
    assert batch["stats"]["status"] == {"failed": 1, "succeeded": 1}


def test_started_and_finished_date_filters(queue: RunningCluster) -> None:
    task = wait_task(queue, client_for(queue).index("dated").add_documents([{"id": 1}]).task_uid)
    for name, value in (("StartedAt", task["startedAt"]), ("FinishedAt", task["finishedAt"])):
        before = _tasks(queue, indexUids="dated", **{f"before{name}": value})["results"]
        after = _tasks(queue, indexUids="dated", **{f"after{name}": value})["results"]
        assert task["uid"] not in [t["uid"] for t in before + after], "bounds are exclusive"
        assert [
            t["uid"] for t in _tasks(queue, indexUids="dated", **{f"after{name}": "2000-01-01"})["results"]
        ] == [task["uid"]]


_DATE_BOUNDS = (
    "beforeEnqueuedAt",
    "afterEnqueuedAt",
    "beforeStartedAt",
    "afterStartedAt",
    "beforeFinishedAt",
    "afterFinishedAt",
)


@pytest.mark.parametrize("bound", _DATE_BOUNDS)
def test_star_date_bound_is_no_bound(queue: RunningCluster, bound: str) -> None:
    task = wait_task(queue, client_for(queue).index("starred").add_documents([{"id": 1}]).task_uid)
    listed = _tasks(queue, indexUids="starred", **{bound: "*"})
    assert task["uid"] in [t["uid"] for t in listed["results"]]
    assert listed["total"] == _tasks(queue, indexUids="starred")["total"]
    batches = httpx.get(f"{queue.url}/batches", params={bound: "*", "uids": task["uid"]})
    assert batches.status_code == 200, batches.text
    assert [b["uid"] for b in batches.json()["results"]] == [task["batchUid"]]
    cancel = httpx.post(f"{queue.url}/tasks/cancel", params={"uids": task["uid"], bound: "*"})
    assert cancel.status_code == 200, cancel.text
    assert wait_task(queue, cancel.json()["taskUid"])["status"] == "succeeded"
    deletion = httpx.delete(f"{queue.url}/tasks", params={"uids": task["uid"], bound: "*"})
    assert deletion.status_code == 200, deletion.text
    assert wait_task(queue, deletion.json()["taskUid"])["details"]["deletedTasks"] == 1


def test_a_star_date_bound_alone_is_a_filter_for_cancel(queue: RunningCluster) -> None:
    response = httpx.post(f"{queue.url}/tasks/cancel?afterEnqueuedAt=*")
    assert response.status_code == 200, response.text
    cancel = wait_task(queue, response.json()["taskUid"])
    assert cancel["status"] == "succeeded"
    assert cancel["details"]["originalFilter"] == "?afterEnqueuedAt=*"
    assert cancel["details"]["matchedTasks"] >= 1


@pytest.mark.parametrize("value", [" *", "**", "*,2020-01-01"])
def test_star_date_bound_is_exact(queue: RunningCluster, value: str) -> None:
    response = httpx.get(f"{queue.url}/tasks", params={"afterEnqueuedAt": value})
    assert response.status_code == 400
    assert response.json() == {
        "message": f"Invalid value in parameter `afterEnqueuedAt`: `{value}` is an invalid date-time."
        " It should follow the YYYY-MM-DD or RFC 3339 date-time format.",
        "code": "invalid_task_after_enqueued_at",
        "type": "invalid_request",
        "link": "https://docs.meilisearch.com/errors#invalid_task_after_enqueued_at",
    }
