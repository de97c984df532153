"""Helpers for talking to a running cluster through the official client and raw HTTP."""

from __future__ import annotations

import time
from typing import Any

import httpx
import meilisearch

from tests.support.cluster import RunningCluster


def client_for(cluster: RunningCluster, key: str | None = None) -> meilisearch.Client:
    return meilisearch.Client(cluster.url, key)


def wait_task(
    cluster: RunningCluster, task_uid: int, timeout: float = 30.0, key: str | None = None
) -> dict[str, Any]:
    """Poll ``GET /tasks/{uid}`` (with ``key`` as bearer, if given) until the task is finished;
    returns the task object."""
    deadline = time.monotonic() + timeout
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    while time.monotonic() < deadline:
        task = httpx.get(f"{cluster.url}/tasks/{task_uid}", headers=headers).json()
        if task["status"] in ("succeeded", "failed", "canceled"):
            return dict(task)
        time.sleep(0.02)
    raise TimeoutError(f"task {task_uid} not finished: {task}")


def switch_features(cluster: RunningCluster, headers: dict[str, str] | None = None, **flags: bool) -> None:
    """``PATCH /experimental-features`` with ``flags``; it must succeed."""
    response = httpx.patch(f"{cluster.url}/experimental-features", json=flags, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
