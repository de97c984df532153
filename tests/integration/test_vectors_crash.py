"""``kill -9`` of a shard while it embeds a batch loses nothing and stores no embedding twice; the
restarted shard loads its vector spaces from their checkpoints (and the journal) instead of
rebuilding them from every stored vector."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest

from tests.support.client import wait_task
from tests.support.cluster import RunningCluster
from tests.support.embedding_servers import DIMENSIONS, REST_SINGLE, EmbeddingServer

PATH = "/rest"
INDEX = "crash-vectors"


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster("--experimental-allowed-ip-networks", "127.0.0.0/8", shards=2) as running:
        yield running


def _task(cluster: RunningCluster, response: httpx.Response, timeout: float = 120) -> dict[str, Any]:
    assert response.status_code == 202, response.text
    return wait_task(cluster, response.json()["taskUid"], timeout=timeout)


def _docs(start: int, count: int) -> list[dict[str, Any]]:
    return [{"id": i, "title": f"document number {i}"} for i in range(start, start + count)]


def test_a_shard_killed_while_embedding_loses_nothing_and_reloads_its_checkpoint(
    cluster: RunningCluster, embedding_server: EmbeddingServer
) -> None:
    server = embedding_server
    server.reset()
    # One text per request (REST_SINGLE), so the shard is still embedding when it is killed.
    embedder = {"source": "rest", "url": server.url + PATH, "dimensions": DIMENSIONS, **REST_SINGLE}
    embedder["documentTemplate"] = "{{doc.title}}"
    settings = {"embedders": {"r": embedder}}
    assert _task(cluster, httpx.patch(f"{cluster.url}/indexes/{INDEX}/settings", json=settings))[
        "status"
    ] == ("succeeded")
    assert (
        _task(cluster, httpx.post(f"{cluster.url}/indexes/{INDEX}/documents", json=_docs(0, 20)))["status"]
        == "succeeded"
    )

    server.delay_s = 0.05
    before = server.requests[PATH]
    response = httpx.post(f"{cluster.url}/indexes/{INDEX}/documents", json=_docs(20, 60))
    assert response.status_code == 202
    deadline = time.monotonic() + 30
    while server.requests[PATH] < before + 10:
        assert time.monotonic() < deadline, "the batch never started embedding"
        time.sleep(0.01)
    killed = cluster.kill_backend("shard-0")
    cluster.wait_replaced("shard-0", killed)
    server.delay_s = 0.0
    task = wait_task(cluster, response.json()["taskUid"], timeout=120)
    assert task["status"] == "succeeded", task
    assert task["details"]["indexedDocuments"] == 60

    stats = httpx.get(f"{cluster.url}/indexes/{INDEX}/stats").json()
    assert (stats["numberOfDocuments"], stats["numberOfEmbeddings"], stats["numberOfEmbeddedDocuments"]) == (
        80,
        80,
        80,
    )
    url = f"{cluster.url}/indexes/{INDEX}/documents"
    docs = httpx.get(url, params={"retrieveVectors": "true", "limit": 100}).json()["results"]
    assert sorted(doc["id"] for doc in docs) == list(range(80))
    got = np.array([doc["_vectors"]["r"]["embeddings"][0] for doc in sorted(docs, key=lambda doc: doc["id"])])
    assert np.allclose(got, server.embed([doc["title"] for doc in _docs(0, 80)]), atol=1e-5)

    opened = [line for line in cluster.output if "vector space opened" in line]
    assert opened, "the restarted shard opened its vector space"
    assert all("checkpoint" in line for line in opened), opened


def test_canceling_a_batch_stops_a_slow_embedding_soon_and_stores_nothing(
    cluster: RunningCluster, embedding_server: EmbeddingServer
) -> None:
    server = embedding_server
    server.reset()
    index = "crash-vectors-cancel"
    embedder = {"source": "rest", "url": server.url + PATH, "dimensions": DIMENSIONS, **REST_SINGLE}
    settings = {"embedders": {"r": {**embedder, "documentTemplate": "{{doc.title}}"}}}
    assert _task(cluster, httpx.patch(f"{cluster.url}/indexes/{index}/settings", json=settings))[
        "status"
    ] == ("succeeded")
    server.delay_s = 0.01  # 4,000 texts one per request: ~20 s a shard to embed them all
    response = httpx.post(f"{cluster.url}/indexes/{index}/documents", json=_docs(0, 4000))
    assert response.status_code == 202
    deadline = time.monotonic() + 30
    while server.requests[PATH] < 20:
        assert time.monotonic() < deadline, "the batch never started embedding"
        time.sleep(0.01)
    started = time.monotonic()
    cancel = httpx.post(f"{cluster.url}/tasks/cancel", params={"uids": response.json()["taskUid"]})
    task = wait_task(cluster, response.json()["taskUid"], timeout=120)
    waited = time.monotonic() - started
    server.delay_s = 0.0
    assert task["status"] == "canceled", task
    assert waited < 10, f"the cancelation waited {waited:.1f} s for the embedder"
    assert wait_task(cluster, cancel.json()["taskUid"])["status"] == "succeeded"
    stats = httpx.get(f"{cluster.url}/indexes/{index}/stats").json()
    assert (stats["numberOfDocuments"], stats["numberOfEmbeddings"]) == (0, 0)
