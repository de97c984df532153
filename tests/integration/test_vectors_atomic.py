"""A task whose embedding fails on one shard only is applied on no shard (``scheduler/prepare.py``):
the embedder fails on a text one shard holds, and the other shard, whose texts embed fine, keeps
nothing of the task either. ``kill -9`` of a shard or of the scheduler while the shards hold their
prepared parts loses nothing, applies nothing half, and embeds no text twice; after a decision that
skips a task, the restarted scheduler keeps it skipped."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import numpy as np
import pytest

from common.partition import shard_of
from tests.support.client import wait_task
from tests.support.cluster import RunningCluster
from tests.support.embedding_servers import DIMENSIONS, REST_BATCH, EmbeddingServer

SHARDS = 2
PATH = "/rest"


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster("--experimental-allowed-ip-networks", "127.0.0.0/8", shards=SHARDS) as running:
        yield running


@pytest.fixture
def server(embedding_server: EmbeddingServer) -> Iterator[EmbeddingServer]:
    embedding_server.reset()
    yield embedding_server
    embedding_server.reset()


def _embedder(server: EmbeddingServer) -> dict[str, Any]:
    return {
        "source": "rest",
        "url": server.url + PATH,
        "dimensions": DIMENSIONS,
        "documentTemplate": "{{doc.title}}",
        **REST_BATCH,
    }


def _docs(start: int, count: int) -> list[dict[str, Any]]:
    return [{"id": i, "title": f"document number {i}"} for i in range(start, start + count)]


def _title_on(shard: int, docs: list[dict[str, Any]]) -> str:
    return next(doc["title"] for doc in docs if shard_of(str(doc["id"]), SHARDS) == shard)


def _send(cluster: RunningCluster, method: str, path: str, body: Any) -> int:
    response = httpx.request(method, f"{cluster.url}{path}", json=body)
    assert response.status_code == 202, response.text
    return int(response.json()["taskUid"])


def _wait(cluster: RunningCluster, uid: int) -> dict[str, Any]:
    return wait_task(cluster, uid, timeout=120)


def _stats(cluster: RunningCluster, index: str) -> tuple[int, int]:
    stats = httpx.get(f"{cluster.url}/indexes/{index}/stats").json()
    return stats["numberOfDocuments"], stats["numberOfEmbeddings"]


def _ids(cluster: RunningCluster, index: str) -> list[int]:
    found = httpx.get(f"{cluster.url}/indexes/{index}/documents", params={"limit": 1000}).json()["results"]
    return sorted(doc["id"] for doc in found)


def _with_embedder(cluster: RunningCluster, server: EmbeddingServer, index: str) -> None:
    uid = _send(cluster, "PATCH", f"/indexes/{index}/settings", {"embedders": {"r": _embedder(server)}})
    assert _wait(cluster, uid)["status"] == "succeeded"


def _check_embeddings(cluster: RunningCluster, server: EmbeddingServer, index: str) -> None:
    url = f"{cluster.url}/indexes/{index}/documents"
    found = httpx.get(url, params={"retrieveVectors": "true", "limit": 1000}).json()["results"]
    got = np.array([doc["_vectors"]["r"]["embeddings"][0] for doc in found])
    assert np.allclose(got, server.embed([doc["title"] for doc in found]), atol=1e-5)


def test_a_batch_failing_on_one_shard_is_applied_on_none(
    cluster: RunningCluster, server: EmbeddingServer
) -> None:
    index = "atomic-documents"
    _with_embedder(cluster, server, index)
    docs = _docs(0, 20)
    server.failing_texts = {_title_on(1, docs)}
    task = _wait(cluster, _send(cluster, "POST", f"/indexes/{index}/documents", docs))
    assert task["status"] == "failed", task
    assert task["error"]["code"] == "vector_embedding_error"
    assert task["details"]["indexedDocuments"] == 0
    assert _stats(cluster, index) == (0, 0)
    assert _ids(cluster, index) == []

    server.failing_texts = set()
    task = _wait(cluster, _send(cluster, "POST", f"/indexes/{index}/documents", docs))
    assert task["status"] == "succeeded", task
    assert _stats(cluster, index) == (20, 20)
    _check_embeddings(cluster, server, index)


def test_a_document_with_bad_vectors_on_one_shard_fails_its_task_on_every_shard(
    cluster: RunningCluster,
) -> None:
    index = "atomic-user-provided"
    settings = {"embedders": {"u": {"source": "userProvided", "dimensions": 3}}}
    assert _wait(cluster, _send(cluster, "PATCH", f"/indexes/{index}/settings", settings))["status"] == (
        "succeeded"
    )
    docs = [{"id": i, "_vectors": {"u": [1.0, float(i), 0.5]}} for i in range(20)]
    wrong = next(doc for doc in docs if shard_of(str(doc["id"]), SHARDS) == 1)
    wrong["_vectors"]["u"] = [1.0, 2.0, 3.0, 4.0]
    task = _wait(cluster, _send(cluster, "POST", f"/indexes/{index}/documents", docs))
    assert task["status"] == "failed", task
    assert task["error"]["code"] == "invalid_vector_dimensions"
    assert _stats(cluster, index) == (0, 0)


def test_a_task_failing_as_a_shard_prepares_is_committed_as_held(cluster: RunningCluster) -> None:
    """The shard where the task failed holds the batch without it: told to skip that task, it commits
    what it holds rather than applying the batch a second time (``shard/held.py``)."""
    index = "atomic-held"
    settings = {"embedders": {"u": {"source": "userProvided", "dimensions": 2}}}
    assert _wait(cluster, _send(cluster, "PATCH", f"/indexes/{index}/settings", settings))["status"] == (
        "succeeded"
    )
    docs = [{"id": i, "_vectors": {"u": [1.0, float(i)]}} for i in range(20)]
    wrong = next(doc for doc in docs if shard_of(str(doc["id"]), SHARDS) == 1)
    wrong["_vectors"]["u"] = [1.0, 2.0, 3.0]
    seen = len(cluster.output)
    task = _wait(cluster, _send(cluster, "POST", f"/indexes/{index}/documents", docs))
    assert task["status"] == "failed", task
    time.sleep(0.5)  # the shards' output reaches the test through a pipe
    again = [line for line in cluster.output[seen:] if "applying it again" in line]
    assert again == []
    assert _stats(cluster, index) == (0, 0)


def test_tasks_batched_together_fail_alone(cluster: RunningCluster, server: EmbeddingServer) -> None:
    """The failing task is skipped on every shard; the others of its batch apply everywhere."""
    index = "atomic-batched"
    _with_embedder(cluster, server, index)
    first, good, bad = _docs(0, 10), _docs(100, 10), _docs(200, 10)
    server.slow_texts = {first[0]["title"]: 1.5}  # the next two tasks wait, then go in one batch
    server.failing_texts = {_title_on(1, bad)}
    uids = [_send(cluster, "POST", f"/indexes/{index}/documents", docs) for docs in (first, good, bad)]
    tasks = [_wait(cluster, uid) for uid in uids]
    assert tasks[1]["batchUid"] == tasks[2]["batchUid"], tasks
    assert [task["status"] for task in tasks] == ["succeeded", "succeeded", "failed"], tasks
    assert tasks[1]["details"]["indexedDocuments"] == 10
    assert tasks[2]["error"]["code"] == "vector_embedding_error"
    assert _ids(cluster, index) == [doc["id"] for doc in first + good]
    assert _stats(cluster, index) == (20, 20)
    _check_embeddings(cluster, server, index)


def test_a_settings_change_failing_on_one_shard_changes_no_shard(
    cluster: RunningCluster, server: EmbeddingServer
) -> None:
    index = "atomic-settings"
    docs = _docs(0, 20)
    assert (
        _wait(cluster, _send(cluster, "POST", f"/indexes/{index}/documents", docs))["status"] == "succeeded"
    )
    server.failing_texts = {_title_on(0, docs)}
    settings = {"embedders": {"r": _embedder(server)}}
    task = _wait(cluster, _send(cluster, "PATCH", f"/indexes/{index}/settings", settings))
    assert task["status"] == "failed", task
    assert task["error"]["code"] == "vector_embedding_error"
    assert httpx.get(f"{cluster.url}/indexes/{index}/settings/embedders").json() == {}
    assert _stats(cluster, index) == (20, 0)
    # Documents written now are not embedded by a shard that kept the refused settings.
    assert _wait(cluster, _send(cluster, "POST", f"/indexes/{index}/documents", _docs(20, 4)))["status"] == (
        "succeeded"
    )
    assert _stats(cluster, index) == (24, 0)

    server.failing_texts = set()
    assert _wait(cluster, _send(cluster, "PATCH", f"/indexes/{index}/settings", settings))["status"] == (
        "succeeded"
    )
    assert _stats(cluster, index) == (24, 24)
    _check_embeddings(cluster, server, index)


def _hold_shard_0(
    server: EmbeddingServer, docs: list[dict[str, Any]], fail: bool, delay: float = 2.5
) -> None:
    """Shard 1's texts answer slowly (and fail, with ``fail``): shard 0 prepares first, then holds."""
    slow = _title_on(1, docs)
    server.slow_texts = {slow: delay}
    if fail:
        server.failing_texts = {slow}


def _prepared_files(cluster: RunningCluster, shard: int) -> list[str]:
    """The shard's kept embedders' answers (``shard/vector/prepared.py``): there from the moment it
    prepared its part until it committed it."""
    directory = cluster.layout.shard_dir(shard) / "prepared"
    return [path.name for path in directory.glob("*.npz")] if directory.exists() else []


def _until(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.001)


def _until_shard_0_holds(cluster: RunningCluster, server: EmbeddingServer, before: int) -> None:
    """Shard 0 prepared its part and holds it; shard 1 still waits for its slow text."""
    _until(lambda: server.requests[PATH] >= before + 2, "the shards never asked the embedder")
    _until(lambda: _prepared_files(cluster, 0), "shard 0 never prepared")
    assert not _prepared_files(cluster, 1), "shard 1 prepared already"


@pytest.mark.parametrize("fail", [False, True], ids=["succeeding", "failing"])
@pytest.mark.parametrize("role", ["shard-0", "scheduler"])
def test_a_kill_while_the_shards_hold_their_parts_loses_nothing_and_embeds_once(
    cluster: RunningCluster, server: EmbeddingServer, role: str, fail: bool
) -> None:
    """Failing: shard 1's slow text fails at last; the task fails and no shard keeps anything."""
    index = f"atomic-kill-{role}-{fail}"
    _with_embedder(cluster, server, index)
    docs = _docs(0, 20)
    _hold_shard_0(server, docs, fail=fail)
    before = server.requests[PATH]
    uid = _send(cluster, "POST", f"/indexes/{index}/documents", docs)
    _until_shard_0_holds(cluster, server, before)
    killed = cluster.kill_backend(role)
    cluster.wait_replaced(role, killed)
    task = _wait(cluster, uid)
    if fail:
        assert task["status"] == "failed", task
        assert _stats(cluster, index) == (0, 0)
        server.reset()
        task = _wait(cluster, _send(cluster, "POST", f"/indexes/{index}/documents", docs))
    assert task["status"] == "succeeded", task
    assert _ids(cluster, index) == list(range(20))
    assert _stats(cluster, index) == (20, 20)
    _check_embeddings(cluster, server, index)
    if not fail:
        # Shard 0 applied its part from the answers it kept; shard 1 (never killed) held on to its own.
        assert server.texts[PATH] == 20, server.texts


def test_a_scheduler_killed_after_deciding_the_commit_applies_the_whole_batch(
    cluster: RunningCluster, server: EmbeddingServer
) -> None:
    """Shard 0 is killed while it holds its part, so it applies it again at the commit, from the
    answers it kept, and slowly (thousands of documents with vectors): the scheduler is killed once
    shard 1 committed (its documents show) and while shard 0 has not; the restarted one commits
    with the decision it recorded."""
    index = "atomic-decided"
    _with_embedder(cluster, server, index)
    rng = np.random.default_rng(7)
    heavy = [i for i in range(1000, 10_000) if shard_of(str(i), SHARDS) == 0][:3000]
    docs = _docs(0, 20) + [
        {"id": i, "title": f"given {i}", "_vectors": {"r": rng.standard_normal(DIMENSIONS).round(3).tolist()}}
        for i in heavy
    ]
    _hold_shard_0(server, docs, fail=False, delay=10.0)
    before = server.requests[PATH]
    uid = _send(cluster, "POST", f"/indexes/{index}/documents", docs)
    _until_shard_0_holds(cluster, server, before)
    killed = cluster.kill_backend("shard-0")
    cluster.wait_replaced("shard-0", killed)
    _until(lambda: _stats(cluster, index)[0] > 0, "shard 1 never committed")
    assert _stats(cluster, index)[0] < len(docs), "shard 0 committed before the kill"
    killed = cluster.kill_backend("scheduler")
    cluster.wait_replaced("scheduler", killed)
    task = _wait(cluster, uid)
    assert task["status"] == "succeeded", task
    assert task["details"]["indexedDocuments"] == len(docs)
    assert _stats(cluster, index) == (len(docs), len(docs))
    assert server.texts[PATH] == 20, server.texts
    assert _prepared_files(cluster, 0) == _prepared_files(cluster, 1) == []


def test_a_scheduler_killed_after_a_decision_that_skips_a_task_keeps_it_skipped(
    cluster: RunningCluster, server: EmbeddingServer
) -> None:
    """A batch of two tasks, the second's texts failing on both shards: the decision skips it (and
    is recorded). Shard 0 is killed while it holds its part, so it applies it again, slowly, at the
    commit; the scheduler is killed once shard 1 committed, and the provider answers every text from
    then on. The restarted scheduler commits with the recorded decision: the first task everywhere,
    the skipped one nowhere, though preparing again would now succeed."""
    index = "atomic-decided-skip"
    _with_embedder(cluster, server, index)
    rng = np.random.default_rng(8)
    heavy = [i for i in range(1000, 10_000) if shard_of(str(i), SHARDS) == 0][:3000]
    first, good, bad = _docs(0, 10), _docs(100, 20), _docs(200, 10)
    good += [
        {"id": i, "title": f"given {i}", "_vectors": {"r": rng.standard_normal(DIMENSIONS).round(3).tolist()}}
        for i in heavy
    ]
    _hold_shard_0(server, good, fail=False, delay=10.0)
    server.slow_texts[first[0]["title"]] = 1.5  # good and bad wait, then go in one batch
    server.failing_texts = {_title_on(0, bad), _title_on(1, bad)}
    uids = [_send(cluster, "POST", f"/indexes/{index}/documents", docs) for docs in (first, good, bad)]
    assert _wait(cluster, uids[0])["status"] == "succeeded"
    _until_shard_0_holds(cluster, server, server.requests[PATH] - 2)
    killed = cluster.kill_backend("shard-0")
    cluster.wait_replaced("shard-0", killed)
    _until(lambda: _stats(cluster, index)[0] > len(first), "shard 1 never committed")
    assert _stats(cluster, index)[0] < len(first) + len(good), "shard 0 committed before the kill"
    killed = cluster.kill_backend("scheduler")
    server.failing_texts = set()
    cluster.wait_replaced("scheduler", killed)
    done = [_wait(cluster, uid) for uid in uids[1:]]
    assert done[0]["batchUid"] == done[1]["batchUid"], done
    assert [task["status"] for task in done] == ["succeeded", "failed"], done
    assert done[0]["details"]["indexedDocuments"] == len(good)
    assert done[1]["error"]["code"] == "vector_embedding_error"
    url = f"{cluster.url}/indexes/{index}/documents"
    found = httpx.get(url, params={"limit": 5000, "fields": "id"}).json()["results"]
    assert sorted(doc["id"] for doc in found) == sorted(doc["id"] for doc in first + good)
    assert _stats(cluster, index) == (len(first) + len(good), len(first) + len(good))
