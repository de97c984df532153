"""Vectors of a ``userProvided`` embedder (search.md §6.11, §1.6): every ``_vectors`` form, dimension
errors, ``retrieveVectors`` on every route, updates, deletions and stats, through a two-shard cluster.

The expected messages and shapes are the reference engine's answers to the same requests.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

INDEX = "user-vectors"
EMBEDDERS = {"e": {"source": "userProvided", "dimensions": 3}}
DOCS: list[dict[str, Any]] = [
    {"id": 1, "title": "one", "_vectors": {"e": [1, 0, 0]}},
    {"id": 2, "title": "two", "_vectors": {"e": [[0, 1, 0], [0.5, 0.5, 0]]}},
    {"id": 3, "title": "three", "_vectors": {"e": {"embeddings": [0, 0, 1], "regenerate": True}}},
    {"id": 4, "title": "four", "_vectors": {"e": None, "other": [9, 9]}},
    {"id": 5, "title": "five", "_vectors": {"e": {"embeddings": None, "regenerate": False}}},
]
SHOWN = {
    1: {"e": {"embeddings": [[1.0, 0.0, 0.0]], "regenerate": False}},
    2: {"e": {"embeddings": [[0.0, 1.0, 0.0], [0.5, 0.5, 0.0]], "regenerate": False}},
    3: {"e": {"embeddings": [[0.0, 0.0, 1.0]], "regenerate": True}},
    4: {"other": [9, 9], "e": {"embeddings": [], "regenerate": False}},
    5: {"e": {"embeddings": [], "regenerate": False}},
}


def _task(cluster: RunningCluster, response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 202, response.text
    return wait_task(cluster, response.json()["taskUid"])


def _add(
    cluster: RunningCluster, docs: list[dict[str, Any]], index: str = INDEX, update: bool = False
) -> dict[str, Any]:
    method = httpx.put if update else httpx.post
    return _task(cluster, method(f"{cluster.url}/indexes/{index}/documents", json=docs))


@pytest.fixture(scope="module")
def index(cluster: RunningCluster) -> str:
    client = client_for(cluster)
    task = client.create_index(INDEX, {"primaryKey": "id"})
    assert wait_task(cluster, task.task_uid)["status"] == "succeeded"
    task = client.index(INDEX).update_embedders(EMBEDDERS)
    assert wait_task(cluster, task.task_uid)["status"] == "succeeded"
    assert _add(cluster, DOCS)["status"] == "succeeded"
    return INDEX


def _stats(cluster: RunningCluster, index: str) -> dict[str, Any]:
    """Raw: the official client's stats object has no embedding counts."""
    stats: dict[str, Any] = httpx.get(f"{cluster.url}/indexes/{index}/stats").json()
    return stats


def _documents(cluster: RunningCluster, **params: Any) -> list[dict[str, Any]]:
    response = httpx.get(f"{cluster.url}/indexes/{INDEX}/documents", params={"limit": 100, **params})
    assert response.status_code == 200, response.text
    return sorted(response.json()["results"], key=lambda doc: doc["id"])


@pytest.mark.usefixtures("index")
def test_every_form_is_stored_and_shown_on_every_route(cluster: RunningCluster) -> None:
    shown = {doc["id"]: doc["_vectors"] for doc in _documents(cluster, retrieveVectors="true")}
    assert shown == SHOWN
    fetched = client_for(cluster).index(INDEX).get_documents({"retrieveVectors": True, "limit": 100})
    assert {doc.id: dict(doc)["_vectors"] for doc in fetched.results} == SHOWN
    body = {"retrieveVectors": True, "limit": 100}
    posted = httpx.post(f"{cluster.url}/indexes/{INDEX}/documents/fetch", json=body).json()["results"]
    assert {doc["id"]: doc["_vectors"] for doc in posted} == SHOWN
    for doc_id, vectors in SHOWN.items():
        one = httpx.get(
            f"{cluster.url}/indexes/{INDEX}/documents/{doc_id}", params={"retrieveVectors": "true"}
        )
        assert one.json()["_vectors"] == vectors
    hits = httpx.post(
        f"{cluster.url}/indexes/{INDEX}/search", json={"retrieveVectors": True, "limit": 100}
    ).json()["hits"]
    assert {hit["id"]: hit["_vectors"] for hit in hits} == SHOWN
    # the embedder's entries are not part of the stored document: without retrieveVectors nothing shows
    assert _documents(cluster)[0] == {"id": 1, "title": "one"}
    assert _documents(cluster, fields="id,_vectors")[:2] == [{"id": 1}, {"id": 2}]


@pytest.mark.usefixtures("index")
def test_fields_keep_the_embedders_entries(cluster: RunningCluster) -> None:
    """``fields`` without ``_vectors``: the embedders' entries still show, the document's own do not."""
    shown = {doc["id"]: doc for doc in _documents(cluster, fields="id", retrieveVectors="true")}
    assert shown[4] == {"id": 4, "_vectors": {"e": {"embeddings": [], "regenerate": False}}}
    assert shown[1] == {"id": 1, "_vectors": SHOWN[1]}
    named = {doc["id"]: doc for doc in _documents(cluster, fields="id,_vectors", retrieveVectors="true")}
    assert named[4] == {"id": 4, "_vectors": SHOWN[4]}


@pytest.mark.usefixtures("index")
def test_stats_count_embeddings_and_embedded_documents(cluster: RunningCluster) -> None:
    stats = _stats(cluster, INDEX)
    assert (stats["numberOfEmbeddings"], stats["numberOfEmbeddedDocuments"]) == (4, 3)
    assert "_vectors" not in stats["fieldDistribution"]


def test_dimension_errors_fail_the_task_with_the_reference_message(cluster: RunningCluster) -> None:
    index = "user-vectors-errors"
    _task(cluster, httpx.patch(f"{cluster.url}/indexes/{index}/settings", json={"embedders": EMBEDDERS}))
    task = _add(cluster, [{"id": 1, "_vectors": {"e": [1, 2]}}], index)
    assert task["status"] == "failed"
    assert task["error"] == {
        "message": f"Index `{index}`: Invalid vector dimensions in document with id `1` in `._vectors.e`.\n"
        "  - note: embedding #0 has dimensions 2\n  - note: embedder `e` requires 3",
        "code": "invalid_vector_dimensions",
        "type": "invalid_request",
        "link": "https://docs.meilisearch.com/errors#invalid_vector_dimensions",
    }
    task = _add(cluster, [{"id": 3, "_vectors": {"e": [[1, 2, 3], [1, 2]]}}], index)
    assert task["error"]["code"] == "invalid_vector_dimensions"
    assert "embedding #1 has dimensions 2" in task["error"]["message"]
    task = _add(cluster, [{"id": 2, "title": "x"}], index)
    assert task["status"] == "failed"
    assert task["error"]["code"] == "vector_embedding_error"
    assert task["error"]["message"] == (
        f"Index `{index}`: While embedding documents for embedder `e`: no vectors provided for document `2`\n"
        "- Note: `e` has `source: userProvided`, so documents must provide embeddings as an array in"
        " `_vectors.e`.\n- Hint: opt-out for a document with `_vectors.e: null`"
    )
    stats = httpx.get(f"{cluster.url}/indexes/{index}/stats").json()
    assert (stats["numberOfDocuments"], stats["numberOfEmbeddings"]) == (0, 0), "nothing of a failed task"


def test_updates_keep_or_replace_vectors_and_deletions_drop_them(cluster: RunningCluster) -> None:
    index = "user-vectors-updates"
    settings = {"embedders": EMBEDDERS, "filterableAttributes": ["n"]}
    _task(cluster, httpx.patch(f"{cluster.url}/indexes/{index}/settings", json=settings))
    docs = [{"id": i, "n": i, "_vectors": {"e": [i, 1, 0]}} for i in range(1, 11)]
    assert _add(cluster, docs, index)["status"] == "succeeded"

    def vectors(doc_id: int) -> Any:
        url = f"{cluster.url}/indexes/{index}/documents/{doc_id}"
        return httpx.get(url, params={"retrieveVectors": "true"}).json()["_vectors"]["e"]["embeddings"]

    assert _add(cluster, [{"id": 1, "n": 100}], index, update=True)["status"] == "succeeded"
    assert vectors(1) == [[1.0, 1.0, 0.0]], "a partial update without _vectors keeps them"
    assert (
        _add(cluster, [{"id": 2, "_vectors": {"e": [0, 0, 2]}}], index, update=True)["status"] == "succeeded"
    )
    assert vectors(2) == [[0.0, 0.0, 2.0]]
    assert _add(cluster, [{"id": 3, "n": 3}], index)["status"] == "succeeded"
    assert vectors(3) == [[3.0, 1.0, 0.0]], "a replacement without _vectors keeps them"
    client = client_for(cluster).index(index)
    assert wait_task(cluster, client.delete_document(4).task_uid)["status"] == "succeeded"
    assert wait_task(cluster, client.delete_documents(filter="n = 5").task_uid)["status"] == "succeeded"
    counts = ("numberOfDocuments", "numberOfEmbeddings", "numberOfEmbeddedDocuments")
    assert [_stats(cluster, index)[name] for name in counts] == [8, 8, 8]
    assert wait_task(cluster, client.delete_all_documents().task_uid)["status"] == "succeeded"
    assert [_stats(cluster, index)[name] for name in counts] == [0, 0, 0]
    assert _add(cluster, docs[:2], index)["status"] == "succeeded"
    assert vectors(1) == [[1.0, 1.0, 0.0]]
    assert [_stats(cluster, index)[name] for name in counts] == [2, 2, 2]
