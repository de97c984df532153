"""Helpers shared by the keyword-search integration tests (search.md §1, §6, §7).

Every expectation in those tests comes from the contract (``/work/shared/api/search.md``), never from the
current behaviour of the engine. Each test builds its own small index on the module's cluster, so the
tests stay independent of each other and of their order.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

DOCS_LINK = "https://docs.meilisearch.com/errors#"


def make_index(
    cluster: RunningCluster, uid: str, docs: list[dict[str, Any]], settings: dict[str, Any] | None = None
) -> str:
    """Create ``uid`` with ``settings`` (applied before the documents), then add ``docs`` in list order.

    Documents of one batch are inserted in array order, so "insertion order" ties follow the list.
    """
    index = client_for(cluster).index(uid)
    if settings:
        task = wait_task(cluster, index.update_settings(settings).task_uid)
        assert task["status"] == "succeeded", task
    task = wait_task(cluster, index.add_documents(docs, primary_key="id").task_uid)
    assert task["status"] == "succeeded", task
    return uid


@contextmanager
def one_and_three_shards(
    uid: str, docs: list[dict[str, Any]], settings: dict[str, Any]
) -> Iterator[tuple[RunningCluster, RunningCluster]]:
    """A 1-shard and a 3-shard cluster holding the same index: whatever the shard count, the same answer."""
    with RunningCluster(shards=1) as one, RunningCluster(shards=3) as three:
        for running in (one, three):
            make_index(running, uid, docs, settings)
        yield one, three


def update_settings(cluster: RunningCluster, uid: str, settings: dict[str, Any]) -> None:
    task = wait_task(cluster, client_for(cluster).index(uid).update_settings(settings).task_uid)
    assert task["status"] == "succeeded", task


def search_raw(cluster: RunningCluster, uid: str, **params: Any) -> httpx.Response:
    return httpx.post(f"{cluster.url}/indexes/{uid}/search", json=params, timeout=30)


def search(cluster: RunningCluster, uid: str, **params: Any) -> dict[str, Any]:
    response = search_raw(cluster, uid, **params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def search_get(cluster: RunningCluster, uid: str, params: dict[str, str]) -> httpx.Response:
    return httpx.get(f"{cluster.url}/indexes/{uid}/search", params=params, timeout=30)


def ids(body: dict[str, Any]) -> list[Any]:
    return [hit["id"] for hit in body["hits"]]


def found(cluster: RunningCluster, uid: str, q: str, **params: Any) -> list[Any]:
    """The ordered ids of every hit of ``q`` (limit large enough for the small crafted indexes)."""
    return ids(search(cluster, uid, q=q, limit=100, **params))


def assert_error(
    response: httpx.Response,
    code: str,
    message: str | None = None,
    *,
    status: int = 400,
    prefix: str | None = None,
) -> None:
    """The §0 error envelope: message, code, type, link; ``message`` exact or ``prefix`` of it."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"message", "code", "type", "link"}, body
    assert body["code"] == code, body
    assert body["type"] == "invalid_request", body
    assert body["link"] == DOCS_LINK + code, body
    if message is not None:
        assert body["message"] == message, body
    if prefix is not None:
        assert body["message"].startswith(prefix), body


def fold(ranks: list[tuple[int, int]]) -> float:
    """§7.5: fold (r, m) pairs in rule order: R = (R-1)*m + r, M = M*m; score = R/M."""
    big_r, big_m = 1, 1
    for r, m in ranks:
        big_r, big_m = (big_r - 1) * m + r, big_m * m
    return big_r / big_m
