"""The batch object's ``progress`` and ``stats.progressTrace`` (core.md §3.5): where a running batch
is, and how long each step of a finished one took, as the reference shows them."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx

from tests.support.client import client_for, wait_task
from tests.support.cluster import REPO_ROOT, RunningCluster

MOVIES = REPO_ROOT.parent / "shared" / "datasets" / "movies-1688" / "movies.json"
DURATION = re.compile(r"^\d+(\.\d\d)?(ns|µs|ms|s)$")
DOCUMENT_STEPS = [
    "processing tasks > reading payloads",
    "processing tasks > preparing documents",
    "processing tasks > applying on shards > shard 0 > applying operations",
    "processing tasks > applying on shards > shard 0 > writing changes",
    "processing tasks > applying on shards > shard 0 > committing",
    "processing tasks > applying on shards > shard 0 > updating vector indexes",
    "processing tasks > applying on shards > shard 0",
]


def _batch(cluster: RunningCluster, uid: int) -> dict[str, Any]:
    response = httpx.get(f"{cluster.url}/batches/{uid}")
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_a_finished_batch_traces_its_steps(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("progress-trace")
    task = wait_task(cluster, index.add_documents([{"id": n, "t": f"word {n}"} for n in range(40)]).task_uid)
    batch = _batch(cluster, task["batchUid"])
    assert batch["progress"] is None
    assert list(batch["stats"]) == ["totalNbTasks", "status", "types", "indexUids", "progressTrace"]
    trace = batch["stats"]["progressTrace"]
    assert all(DURATION.match(value) for value in trace.values()), trace
    shard_steps = [step.replace("shard 0", "shard 1") for step in DOCUMENT_STEPS[2:]]
    expected = [
        *DOCUMENT_STEPS,
        *shard_steps,
        "processing tasks > applying on shards",
        "processing tasks",
        "writing tasks to disk",
    ]
    # the two shards answer in either order; each one's steps come before its own total
    assert sorted(trace) == sorted(expected)
    assert list(trace)[:2] == DOCUMENT_STEPS[:2] and list(trace)[-3:] == expected[-3:]
    for shard in ("shard 0", "shard 1"):
        keys = [key for key in trace if f"> {shard}" in key]
        assert keys[-1].endswith(shard), keys
    # settings batches trace each shard's answer under the batch's one step
    settings = wait_task(cluster, index.update_filterable_attributes(["t"]).task_uid)
    trace = _batch(cluster, settings["batchUid"])["stats"]["progressTrace"]
    assert {"processing tasks > shard 0", "processing tasks > shard 1", "writing tasks to disk"} <= set(trace)


def _shard_steps_together(trace: dict[str, str]) -> bool:
    """Whether each shard's steps are contiguous in the trace, as when its one answer brought them."""
    shards = [
        key.split(" > ")[2] for key in trace if key.startswith("processing tasks > applying on shards > ")
    ]
    return all(shards[i] == shards[i + 1] or shards[i] not in shards[i + 1 :] for i in range(len(shards) - 1))


def test_a_batch_no_shard_can_fail_alone_goes_in_one_phase(cluster: RunningCluster) -> None:
    """Without embedders, a task fails alike on every shard, so shards apply and commit at once
    (``scheduler/prepare.py``): each shard answers once, its steps together. With embedders, every
    shard prepares before any commits, so a shard's commit comes after the other's preparation."""
    plain = client_for(cluster).index("progress-one-phase")
    task = wait_task(cluster, plain.add_documents([{"id": n} for n in range(40)]).task_uid)
    assert _shard_steps_together(_batch(cluster, task["batchUid"])["stats"]["progressTrace"])
    embedded = client_for(cluster).index("progress-two-phases")
    embedder = {"source": "userProvided", "dimensions": 2}
    wait_task(cluster, embedded.update_settings({"embedders": {"u": embedder}}).task_uid)
    documents = [{"id": n, "_vectors": {"u": [1.0, n]}} for n in range(40)]
    task = wait_task(cluster, embedded.add_documents(documents).task_uid)
    assert task["status"] == "succeeded", task
    assert not _shard_steps_together(_batch(cluster, task["batchUid"])["stats"]["progressTrace"])


def test_a_running_batch_says_where_it_is() -> None:
    """Polled while the movies load on one shard: the steps stack from ``processing tasks`` down, the
    percentage grows, and the trace so far is shown."""
    with RunningCluster(shards=1) as cluster:
        response = httpx.post(
            f"{cluster.url}/indexes/movies/documents",
            content=MOVIES.read_bytes(),
            headers={"Content-Type": "application/json"},
            timeout=60,
        )
        task_uid = response.json()["taskUid"]
        seen: list[dict[str, Any]] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            batches = httpx.get(f"{cluster.url}/batches", params={"limit": 1}).json()["results"]
            if batches and batches[0]["progress"] is not None:
                seen.append(batches[0])
            elif seen:
                break
            time.sleep(0.02)
        assert seen, "the batch was never seen running"
        for batch in seen:
            steps = batch["progress"]["steps"]
            assert steps[0] == {"currentStep": "processing tasks", "finished": 0, "total": 2}
            assert steps[1]["total"] == 3
            assert 0 <= batch["progress"]["percentage"] < 50
            assert batch["details"] == {"receivedDocuments": 1688, "indexedDocuments": None}
            assert batch["batchStrategy"] == "batched all enqueued tasks for index `movies`"
            assert "processing tasks" in batch["stats"]["progressTrace"]
        percentages = [batch["progress"]["percentage"] for batch in seen]
        assert percentages == sorted(percentages)
        assert any(batch["progress"]["steps"][1]["currentStep"] == "applying on shards" for batch in seen)
        done = wait_task(cluster, task_uid, timeout=120)
        assert done["status"] == "succeeded"
        assert _batch(cluster, done["batchUid"])["progress"] is None
