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


@pytest.mark.parametrize(
    ("vectors", "message"),
    [
        (
            [1, True, 3],
            "Invalid value type at `._vectors.e[1]`: expected a number, but found a boolean: `true`",
        ),
        ([1, "a", 3], 'Invalid value type at `._vectors.e[1]`: expected a number, but found a string: `"a"`'),
        (
            [[1, 2, 3], [1, None, 3]],
            "Invalid value type at `._vectors.e[1][1]`: expected a number, but found null",
        ),
        (
            [[1, 2, 3], 4],
            "Invalid value type at `._vectors.e[1]`: expected an array, but found a positive integer: `4`",
        ),
    ],
)
def test_values_of_the_wrong_type_fail_the_task(cluster: RunningCluster, vectors: Any, message: str) -> None:
    index = "user-vectors-types"
    _task(cluster, httpx.patch(f"{cluster.url}/indexes/{index}/settings", json={"embedders": EMBEDDERS}))
    task = _add(cluster, [{"id": 9, "_vectors": {"e": vectors}}], index)
    assert task["error"]["code"] == "invalid_vectors_type"
    assert task["error"]["message"] == (
        f"Index `{index}`: Bad embedder configuration in the document with id: `9`. {message}"
    )


def test_regenerate_alone_gives_no_vectors_to_a_user_provided_embedder(cluster: RunningCluster) -> None:
    index = "user-vectors-regenerate"
    _task(cluster, httpx.patch(f"{cluster.url}/indexes/{index}/settings", json={"embedders": EMBEDDERS}))
    task = _add(cluster, [{"id": 1, "_vectors": {"e": {"regenerate": True}}}], index)
    assert task["error"]["code"] == "vector_embedding_error"
    assert "no vectors provided for document `1`" in task["error"]["message"]
    assert _add(cluster, [{"id": 1, "_vectors": {"e": [1, 2, 3]}}], index)["status"] == "succeeded"
    assert _add(cluster, [{"id": 1, "_vectors": {"e": {"regenerate": True}}}], index)["status"] == "succeeded"
    url = f"{cluster.url}/indexes/{index}/documents/1"
    shown = httpx.get(url, params={"retrieveVectors": "true"}).json()["_vectors"]
    assert shown == {"e": {"embeddings": [[1.0, 2.0, 3.0]], "regenerate": False}}, "kept as stored"


def test_settings_reshaping_the_space(cluster: RunningCluster) -> None:
    """``binaryQuantized`` turned on keeps the vectors as sign bits (shown as 1 and 0, as the reference
    shows them); new ``dimensions`` drop them (the reference keeps them, stale)."""
    index = "user-vectors-reshape"
    _task(cluster, httpx.patch(f"{cluster.url}/indexes/{index}/settings", json={"embedders": EMBEDDERS}))
    docs = [{"id": i, "_vectors": {"e": [i - 2, 0.5, -1]}} for i in range(5)]
    assert _add(cluster, docs, index)["status"] == "succeeded"
    binary = {"embedders": {"e": {"binaryQuantized": True}}}
    assert _task(cluster, httpx.patch(f"{cluster.url}/indexes/{index}/settings", json=binary))["status"] == (
        "succeeded"
    )
    shown = {doc["id"]: doc["_vectors"]["e"] for doc in _documents_of(cluster, index)}
    assert shown[0] == {"embeddings": [[0.0, 1.0, 0.0]], "regenerate": False}
    assert shown[4] == {"embeddings": [[1.0, 1.0, 0.0]], "regenerate": False}
    assert [_stats(cluster, index)[name] for name in ("numberOfEmbeddings", "numberOfEmbeddedDocuments")] == [
        5,
        5,
    ]
    resized = {"embedders": {"e": {"dimensions": 2}}}
    assert _task(cluster, httpx.patch(f"{cluster.url}/indexes/{index}/settings", json=resized))["status"] == (
        "succeeded"
    )
    assert _stats(cluster, index)["numberOfEmbeddings"] == 0
    assert _add(cluster, [{"id": 0, "_vectors": {"e": [0.5, -0.5]}}], index)["status"] == "succeeded"
    assert _documents_of(cluster, index)[0]["_vectors"]["e"] == {
        "embeddings": [[1.0, 0.0]],
        "regenerate": False,
    }


def _documents_of(cluster: RunningCluster, index: str) -> list[dict[str, Any]]:
    url = f"{cluster.url}/indexes/{index}/documents"
    docs: list[dict[str, Any]] = httpx.get(url, params={"retrieveVectors": "true"}).json()["results"]
    return sorted(docs, key=lambda doc: doc["id"])


def test_stats_count_every_embedding_and_each_embedded_document_once(cluster: RunningCluster) -> None:
    """Two embedders (the reference's answer to the same documents: 5 embeddings, 3 documents)."""
    index = "user-vectors-two"
    embedders = {**EMBEDDERS, "f": {"source": "userProvided", "dimensions": 2, "binaryQuantized": True}}
    _task(cluster, httpx.patch(f"{cluster.url}/indexes/{index}/settings", json={"embedders": embedders}))
    docs = [
        {"id": 1, "_vectors": {"e": [1, 2, 3], "f": [0.5, -0.2]}},
        {"id": 2, "_vectors": {"e": [1, 2, 3], "f": None}},
        {"id": 3, "_vectors": {"e": None, "f": [[1, 1], [-1, 2]]}},
    ]
    assert _add(cluster, docs, index)["status"] == "succeeded"
    stats = _stats(cluster, index)
    assert (stats["numberOfEmbeddings"], stats["numberOfEmbeddedDocuments"]) == (5, 3)
    shown = {doc["id"]: doc["_vectors"] for doc in _documents_of(cluster, index)}
    assert shown[3] == {
        "e": {"embeddings": [], "regenerate": False},
        "f": {"embeddings": [[1.0, 1.0], [0.0, 1.0]], "regenerate": False},
    }


@pytest.mark.usefixtures("index")
def test_vector_filters_select_from_the_stored_embeddings(cluster: RunningCluster) -> None:
    """``_vectors…EXISTS`` (multimodal feature) on search and document reads."""
    enabled = httpx.patch(f"{cluster.url}/experimental-features", json={"multimodal": True})
    assert enabled.status_code == 200, enabled.text
    expected = {
        "_vectors EXISTS": [1, 2, 3],
        "_vectors.e EXISTS": [1, 2, 3],
        "NOT _vectors.e EXISTS": [4, 5],
        "_vectors.e.userProvided EXISTS": [1, 2, 4, 5],
        "_vectors.e.regenerate EXISTS": [3],
        "_vectors.e.documentTemplate EXISTS": [],
        "_vectors.e.fragments.f EXISTS": [],
        "_vectors.other EXISTS": [],
    }
    for condition, ids in expected.items():
        body = {"filter": condition, "limit": 100}
        hits = httpx.post(f"{cluster.url}/indexes/{INDEX}/search", json=body).json()["hits"]
        assert sorted(hit["id"] for hit in hits) == ids, condition
        fetched = httpx.post(f"{cluster.url}/indexes/{INDEX}/documents/fetch", json=body).json()["results"]
        assert sorted(doc["id"] for doc in fetched) == ids, condition


def test_vectors_follow_their_index_through_a_rename_and_a_swap(cluster: RunningCluster) -> None:
    first, second = "user-vectors-swap-a", "user-vectors-swap-b"
    for index, value in ((first, 1), (second, 2)):
        _task(cluster, httpx.patch(f"{cluster.url}/indexes/{index}/settings", json={"embedders": EMBEDDERS}))
        assert _add(cluster, [{"id": 1, "_vectors": {"e": [value, 0, 0]}}], index)["status"] == "succeeded"
    swapped = httpx.post(f"{cluster.url}/swap-indexes", json=[{"indexes": [first, second]}])
    assert _task(cluster, swapped)["status"] == "succeeded"
    assert _documents_of(cluster, first)[0]["_vectors"]["e"]["embeddings"] == [[2.0, 0.0, 0.0]]
    assert _documents_of(cluster, second)[0]["_vectors"]["e"]["embeddings"] == [[1.0, 0.0, 0.0]]
    renamed = httpx.patch(f"{cluster.url}/indexes/{first}", json={"uid": "user-vectors-swap-c"})
    assert _task(cluster, renamed)["status"] == "succeeded"
    assert _documents_of(cluster, "user-vectors-swap-c")[0]["_vectors"]["e"]["embeddings"] == [
        [2.0, 0.0, 0.0]
    ]
    assert _stats(cluster, "user-vectors-swap-c")["numberOfEmbeddings"] == 1
