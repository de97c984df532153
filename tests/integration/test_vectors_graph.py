"""A vector space crossing the exact→HNSW threshold builds its graph in the background
(``shard/vector/space.py``): the batch that crossed it succeeds without waiting, searches answer
before, during and after the build with the nearest documents (exactly, or within the recall
target once the graph answers), and a shard killed while it builds comes back and builds again."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest

from shard.vector.space import APPROXIMATE_FROM
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

INDEX = "graph-vectors"
DIMENSIONS = 32
COUNT = APPROXIMATE_FROM + 500
QUERIES = 20


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster(shards=1) as running:  # one shard: the whole index is one space past the threshold
        yield running


def _recall(cluster: RunningCluster, vectors: np.ndarray, ids: np.ndarray, queries: np.ndarray) -> float:
    """Recall@10 of semantic searches against exact search over the documents ``ids``, whose
    similarities the hits must carry (candidates are re-scored exactly: (1 + cos) / 2)."""
    index = client_for(cluster).index(INDEX)
    rows = vectors[ids] / np.linalg.norm(vectors[ids], axis=1, keepdims=True)
    found = 0
    for query in queries:
        params = {"vector": query.tolist(), "hybrid": {"embedder": "u", "semanticRatio": 1.0}}
        hits = index.search("", {**params, "limit": 10, "showRankingScore": True})["hits"]
        assert len(hits) == 10
        scores = dict(zip(ids.tolist(), (rows @ (query / np.linalg.norm(query))).tolist(), strict=True))
        for hit in hits:
            assert hit["id"] in scores, "a deleted document served"
            assert hit["_rankingScore"] == pytest.approx((1 + scores[hit["id"]]) / 2, abs=1e-5)
        best = sorted(scores, key=lambda doc: -scores[doc])[:10]
        found += len({hit["id"] for hit in hits} & set(best))
    return found / (10 * len(queries))


def test_crossing_the_threshold_builds_the_graph_off_the_batch_and_searches_keep_answering(
    cluster: RunningCluster,
) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(COUNT, DIMENSIONS)).astype(np.float32).round(3)
    queries = rng.normal(size=(QUERIES, DIMENSIONS)).astype(np.float32)
    index = client_for(cluster).index(INDEX)
    embedder = {"source": "userProvided", "dimensions": DIMENSIONS}
    assert wait_task(cluster, index.update_settings({"embedders": {"u": embedder}}).task_uid)["status"] == (
        "succeeded"
    )
    documents = [{"id": i, "_vectors": {"u": vectors[i].tolist()}} for i in range(COUNT)]
    task = wait_task(cluster, index.add_documents(documents).task_uid, timeout=300)
    assert task["status"] == "succeeded", task
    everything = np.arange(COUNT)
    assert _recall(cluster, vectors, everything, queries) >= 0.95, "while the graph builds (or just after)"

    deadline = time.monotonic() + 180
    while not any("vector graph built" in line for line in cluster.output):
        assert time.monotonic() < deadline, "the graph was never built"
        time.sleep(0.2)
    assert _recall(cluster, vectors, everything, queries) >= 0.95, "through the graph"

    # A quarter deleted: the graph is rebuilt in the background; the shard is killed meanwhile.
    gone = list(range(0, COUNT, 3))
    deletion = wait_task(cluster, index.delete_documents([str(i) for i in gone]).task_uid, timeout=120)
    assert deletion["status"] == "succeeded"
    killed = cluster.kill_backend("shard-0")
    cluster.wait_replaced("shard-0", killed, timeout=60)
    kept = np.setdiff1d(everything, gone)
    assert index.get_stats().number_of_documents == len(kept)
    assert _recall(cluster, vectors, kept, queries) >= 0.95, "after the restart"
