"""The experimental task routes (core.md §3.4.6): ``GET /tasks/{uid}/documents``, ``POST /tasks/compact``."""

from __future__ import annotations

import base64
import os
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.support.auth import MASTER_KEY, bearer, create_key, secured_cluster
from tests.support.client import wait_task
from tests.support.cluster import RunningCluster

ADMIN = bearer(MASTER_KEY)
DOCS_LINK = "https://docs.meilisearch.com/errors#"
_SIZE = re.compile(r"\d+(\.\d{1,2})? (B|KiB|MiB|GiB|TiB)")


@pytest.fixture(scope="module")
def secured() -> Iterator[RunningCluster]:
    with secured_cluster() as cluster:
        yield cluster


def _features(cluster: RunningCluster, **features: bool) -> None:
    response = httpx.patch(f"{cluster.url}/experimental-features", json=features, headers=ADMIN)
    assert response.status_code == 200, response.text


def _wait(cluster: RunningCluster, uid: int) -> dict[str, Any]:
    return wait_task(cluster, uid, timeout=120, key=MASTER_KEY)


def _add(cluster: RunningCluster, index: str, body: bytes, content_type: str, query: str = "") -> int:
    response = httpx.post(
        f"{cluster.url}/indexes/{index}/documents{query}",
        content=body,
        headers={**ADMIN, "Content-Type": content_type},
        timeout=60,
    )
    assert response.status_code == 202, response.text
    uid: int = response.json()["taskUid"]
    return uid


def _error(
    response: httpx.Response, status: int, code: str, message: str, kind: str = "invalid_request"
) -> None:
    assert response.status_code == status, response.text
    assert response.json() == {"message": message, "code": code, "type": kind, "link": DOCS_LINK + code}


def _task_documents(cluster: RunningCluster, uid: int | str, key: str = MASTER_KEY) -> httpx.Response:
    return httpx.get(f"{cluster.url}/tasks/{uid}/documents", headers=bearer(key), timeout=60)


def _no_documents(uid: int) -> str:
    return (
        f"Task `{uid}` does not contain any documents. Only `documentAdditionOrUpdate` tasks with the"
        " statuses `enqueued` or `processing` contain documents"
    )


TASK_DOCUMENTS_OFF = (
    "Getting the documents of an enqueued task requires enabling the `get task documents route` experimental"
    " feature. See https://github.com/orgs/meilisearch/discussions/808"
)
COMPACTION_OFF = (
    "Using the /tasks/compact route requires enabling the `task queue compaction route` experimental"
    " feature. See https://github.com/orgs/meilisearch/discussions/883"
)


def test_routes_need_their_feature(secured: RunningCluster) -> None:
    _features(secured, getTaskDocumentsRoute=False, taskQueueCompactionRoute=False)
    for uid in ("0", "abc"):  # the feature is checked before the path
        _error(_task_documents(secured, uid), 400, "feature_not_enabled", TASK_DOCUMENTS_OFF)
    compaction = httpx.post(f"{secured.url}/tasks/compact", headers=ADMIN)
    _error(compaction, 400, "feature_not_enabled", COMPACTION_OFF)


def test_documents_of_enqueued_and_processing_additions(secured: RunningCluster) -> None:
    _features(secured, getTaskDocumentsRoute=True)
    blocker_docs = [{"id": i, "text": "lorem ipsum " * 10} for i in range(30000)]
    blocker = _add(secured, "docs-blocker", orjson.dumps(blocker_docs), "application/json")
    # As the reference answers: JSON objects rewritten without spaces around their keys, values as
    # written, one after the other; NDJSON as sent; CSV as the objects it was read as.
    as_json = _add(
        secured,
        "docs",
        b'[ {"id" : 1, "n": 1.50, "e": 1e3, "b": {"x": [1, 2]}, "a": "\\u00e9", "\\/k\\u00e9": 0},'
        b'\n {"a": 2, "id": "x", "a": 3} ]',
        "application/json",
        "?primaryKey=id",
    )
    as_object = _add(secured, "docs", b'{"id": 7, "s": "x y"}', "application/json")
    ndjson = b'\r\n{"id": 3}\n\n   {"id": 4, "z": null}'
    as_ndjson = _add(secured, "docs", ndjson, "application/x-ndjson")
    as_csv = _add(secured, "docs", b'id,n:number,t\n5,3,"a, ""b"""\n6,,', "text/csv")
    expected = {
        as_json: b'{"id":1,"n":1.50,"e":1e3,"b":{"x": [1, 2]},"a":"\\u00e9","/k\xc3\xa9":0}{"a":3,"id":"x"}',
        as_object: b'{"id":7,"s":"x y"}',
        as_ndjson: ndjson,
        as_csv: b'{"id":"5","n":3,"t":"a, \\"b\\""}{"id":"6","n":null,"t":null}',
    }
    for uid, body in expected.items():
        response = _task_documents(secured, uid)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "application/x-ndjson"
        assert response.content == body
    running = _task_documents(secured, blocker)  # processing or still enqueued: its payload either way
    assert running.status_code == 200, running.text
    assert orjson.loads(b"[" + running.content.replace(b"}{", b"},{") + b"]") == blocker_docs
    for uid in expected:
        assert _wait(secured, uid)["status"] == "succeeded"
    _error(_task_documents(secured, as_json), 404, "task_file_not_found", _no_documents(as_json))


def test_task_documents_errors(secured: RunningCluster) -> None:
    _features(secured, getTaskDocumentsRoute=True)
    settings = httpx.patch(f"{secured.url}/indexes/docs-errors/settings", json={}, headers=ADMIN).json()
    _error(
        _task_documents(secured, settings["taskUid"]),
        404,
        "task_file_not_found",
        _no_documents(settings["taskUid"]),
    )
    _error(_task_documents(secured, 999999), 404, "task_not_found", "Task `999999` not found.")
    _error(
        _task_documents(secured, "abc"),
        400,
        "invalid_task_uids",
        "Task uid `abc` is invalid. It should only contain numeric characters.",
    )


def test_task_documents_authorisation(secured: RunningCluster) -> None:
    _features(secured, getTaskDocumentsRoute=True)
    blocker_docs = [{"id": i, "text": "dolor sit " * 10} for i in range(30000)]
    _add(secured, "auth-blocker", orjson.dumps(blocker_docs), "application/json")
    uid = _add(secured, "auth-docs", b'[{"id": 1}]', "application/json")
    allowed = create_key(secured, actions=["tasks.get"], indexes=["auth-docs"])["key"]
    elsewhere = create_key(secured, actions=["tasks.get"], indexes=["auth-other"])["key"]
    no_action = create_key(secured, actions=["tasks.cancel", "search"], indexes=["*"])["key"]
    response = _task_documents(secured, uid, allowed)
    assert response.status_code in (200, 404), response.text  # 404 once the addition has run
    if response.status_code == 200:
        assert response.content == b'{"id":1}'
    _error(_task_documents(secured, uid, elsewhere), 404, "task_not_found", f"Task `{uid}` not found.")
    _error(
        _task_documents(secured, uid, no_action),
        403,
        "invalid_api_key",
        "The provided API key is invalid.",
        "auth",
    )
    missing = httpx.get(f"{secured.url}/tasks/{uid}/documents")
    assert missing.status_code == 401 and missing.json()["code"] == "missing_authorization_header"


def _compact(cluster: RunningCluster, key: str = MASTER_KEY) -> httpx.Response:
    return httpx.post(f"{cluster.url}/tasks/compact", headers=bearer(key), timeout=120)


def _size(text: str) -> float:
    assert _SIZE.fullmatch(text), text
    amount, unit = text.split()
    return float(amount) * 1024 ** ("B", "KiB", "MiB", "GiB", "TiB").index(unit)


def test_compaction_shrinks_the_store_and_the_cluster_keeps_going(secured: RunningCluster) -> None:
    _features(secured, taskQueueCompactionRoute=True)
    # Payloads are dropped once applied: their pages are what compaction gives back.
    for batch in range(4):
        docs = [{"id": f"{batch}-{i}", "blob": f"{i:x}" * 400} for i in range(3000)]
        last = _add(secured, "compacted", orjson.dumps(docs), "application/json")
    _wait(secured, last)
    response = _compact(secured)
    assert response.status_code == 200, response.text
    body = response.json()
    assert list(body) == ["preSize", "postSize", "status", "actionRequired"]
    assert body["status"] == "succeeded" and body["actionRequired"] is None
    assert _size(body["postSize"]) < _size(body["preSize"])
    # The compacted store is the live one: no restart needed, and what is written now is durable.
    health = httpx.get(f"{secured.url}/health")
    assert health.status_code == 200 and health.json() == {"status": "available"}
    after = _add(secured, "compacted", b'[{"id": "after", "blob": "x"}]', "application/json")
    old = secured.kill_backend("scheduler")
    secured.wait_replaced("scheduler", old)
    assert _wait(secured, after)["status"] == "succeeded"
    assert _wait(secured, last)["status"] == "succeeded"
    document = httpx.get(f"{secured.url}/indexes/compacted/documents/after", headers=ADMIN)
    assert document.status_code == 200, document.text


def test_compaction_authorisation(secured: RunningCluster) -> None:
    _features(secured, taskQueueCompactionRoute=True)
    for actions in (["tasks.compact"], ["tasks.*"]):
        assert (
            _compact(secured, create_key(secured, actions=actions, indexes=["*"])["key"]).status_code == 200
        )
    refused = create_key(secured, actions=["tasks.get", "tasks.cancel", "tasks.delete"], indexes=["*"])["key"]
    _error(_compact(secured, refused), 403, "invalid_api_key", "The provided API key is invalid.", "auth")
    scoped = httpx.post(
        f"{secured.url}/keys",
        json={"actions": ["tasks.compact"], "indexes": ["books"], "expiresAt": None},
        headers=ADMIN,
    )
    assert scoped.status_code == 400 and scoped.json()["code"] == "index_scoped_api_key_with_global_action"
    assert httpx.post(f"{secured.url}/tasks/compact").status_code == 401


@pytest.mark.parametrize("delay", [0.01, 0.03, 0.05, 0.08, 0.2])
def test_a_killed_compaction_leaves_a_valid_store(secured: RunningCluster, delay: float) -> None:
    """``kill -9`` of the scheduler at some point of a compaction: the restarted scheduler opens a
    valid store holding every acknowledged task, and compacting again works.

    ~30 MiB of incompressible payloads wait behind a blocker (~6 s of indexing here), so a compaction
    copies that much (~0.1 s) and the delays land before, during and after the copy and the swap
    (measured: killed at 0.05 s the request fails, at 0.15 s the compaction had finished)."""
    _features(secured, taskQueueCompactionRoute=True)
    index = f"killed-{int(delay * 1000)}"
    blocker_docs = [{"id": i, "text": "lorem ipsum dolor sit amet"} for i in range(100000)]
    blocker = _add(secured, index, orjson.dumps(blocker_docs), "application/json")
    # No document id: each fails at once when its turn comes, without indexing its noise.
    noise = orjson.dumps([{"blob": base64.b64encode(os.urandom(7500)).decode()} for _ in range(1300)])
    uploads: list[int] = []
    threads = [
        threading.Thread(target=lambda: uploads.append(_add(secured, index, noise, "application/json")))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _wait_status(secured, blocker) != "succeeded", "the noise must still be queued"
    outcome: list[httpx.Response | Exception] = []

    def call() -> None:
        try:
            outcome.append(_compact(secured))
        except httpx.HTTPError as error:
            outcome.append(error)

    caller = threading.Thread(target=call)
    caller.start()
    time.sleep(delay)
    old = secured.kill_backend("scheduler")
    caller.join()
    secured.wait_replaced("scheduler", old)
    assert not (secured.layout.scheduler_dir / "compacting").exists()
    outcomes = [_wait(secured, uid) for uid in [blocker, *sorted(uploads)]]
    assert [task["status"] for task in outcomes] == ["succeeded", "failed", "failed", "failed"]
    assert {task["error"]["code"] for task in outcomes[1:]} == {"missing_document_id"}
    stats = httpx.get(f"{secured.url}/indexes/{index}/stats", headers=ADMIN).json()
    assert stats["numberOfDocuments"] == len(blocker_docs)
    assert _compact(secured).status_code == 200


def _wait_status(cluster: RunningCluster, uid: int) -> str:
    status: str = httpx.get(f"{cluster.url}/tasks/{uid}", headers=ADMIN).json()["status"]
    return status
