"""HTTP calls against a running cluster, shared by the crash cycles, their verification and the bulk run.

Each helper is one request pattern of the public API (send a write, page ``GET /tasks``, wait for a
task or for the queue to drain, read every document); the reads retry and the waits poll, since the
cluster may just have been restarted. None of them judges what it reads, which is left to the callers.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import httpx

from tests.support.crash.workload import INDEX, Document, Write

_DOC_TASK_TYPES = "documentAdditionOrUpdate,documentDeletion"
FINISHED = ("succeeded", "failed", "canceled")


def send(client: httpx.Client, write: Write) -> int | str:
    """The acknowledged task uid, or why there was no acknowledgement."""
    params = {"customMetadata": write.rid}
    base = f"/indexes/{INDEX}/documents"
    try:
        if write.kind == "replace":
            response = client.post(base, params=params, json=list(write.documents))
        elif write.kind == "update":
            response = client.put(base, params=params, json=list(write.documents))
        elif write.kind == "delete":
            response = client.delete(f"{base}/{write.ids[0]}", params=params)
        elif write.kind == "delete_batch":
            response = client.post(f"{base}/delete-batch", params=params, json=list(write.ids))
        else:
            response = client.delete(base, params=params)
    except httpx.HTTPError as error:
        return type(error).__name__
    if response.status_code == 202:
        return int(response.json()["taskUid"])
    if response.status_code >= 500:
        return f"http {response.status_code}"
    return f"rejected {response.status_code} {response.text[:200]}"


def get_json(client: httpx.Client, path: str, params: dict[str, Any] | None = None) -> Any:
    """GET with a few retries: verification runs on a healthy cluster, but be patient with it."""
    for attempt in range(20):
        try:
            response = client.get(path, params=params)
            if response.status_code < 500:
                return response.json()
        except httpx.HTTPError:
            pass
        time.sleep(0.1 * (attempt + 1))
    raise RuntimeError(f"GET {path} kept failing")


def list_tasks(client: httpx.Client) -> list[dict[str, Any]]:
    """Every document task of the index, in uid order (pages of ``GET /tasks``)."""
    tasks: list[dict[str, Any]] = []
    params: dict[str, Any] = {"indexUids": INDEX, "types": _DOC_TASK_TYPES, "limit": 5000}
    while True:
        page = get_json(client, "/tasks", params)
        tasks.extend(page["results"])
        if page.get("next") is None:
            break
        params["from"] = page["next"]
    return sorted(tasks, key=lambda t: t["uid"])


def wait_idle(client: httpx.Client, timeout: float) -> list[dict[str, Any]]:
    """Poll until no document task of the index is enqueued or processing; returns those still open."""
    deadline = time.monotonic() + timeout
    params = {"indexUids": INDEX, "statuses": "enqueued,processing", "limit": 1000}
    while True:
        page = get_json(client, "/tasks", params)
        if page["total"] == 0 or time.monotonic() > deadline:
            return list(page["results"])
        time.sleep(0.05)


def read_documents(client: httpx.Client, limit: int = 100_000) -> tuple[dict[str, Document], list[str]]:
    """The index's documents by id, and ids returned more than once."""
    page = get_json(client, f"/indexes/{INDEX}/documents", {"limit": limit})
    seen: Counter[str] = Counter(str(doc["id"]) for doc in page["results"])
    duplicates = [doc_id for doc_id, n in seen.items() if n > 1]
    if page["total"] != len(page["results"]):
        duplicates.append(f"total {page['total']} != {len(page['results'])} returned")
    return {str(doc["id"]): doc for doc in page["results"]}, duplicates


def wait_task(client: httpx.Client, uid: int, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        task = get_json(client, f"/tasks/{uid}")
        if task.get("status") in FINISHED:
            return dict(task)
        time.sleep(0.02)
    raise TimeoutError(f"task {uid} not finished after {timeout} s")
