"""Embeddings generated in the batch (search.md §6.11) through a loopback REST embedder: only documents
whose rendered text changed are embedded, user-provided vectors are kept, settings changes re-embed
what they must, and a provider failure fails its task alone with nothing stored.

The REST server (``tests/support/embedding_servers.py``) counts the texts it embeds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest

from tests.support.client import wait_task
from tests.support.cluster import RunningCluster
from tests.support.embedding_servers import DIMENSIONS, REST_BATCH, REST_SINGLE, EmbeddingServer

PATH = "/rest"


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster("--experimental-allowed-ip-networks", "127.0.0.0/8", shards=2) as running:
        yield running


@pytest.fixture
def server(embedding_server: EmbeddingServer) -> EmbeddingServer:
    embedding_server.reset()
    return embedding_server


def _rest(server: EmbeddingServer, **fields: Any) -> dict[str, Any]:
    """``dimensions`` set: the embedder needs no probe request to learn them (counts stay exact)."""
    return {"source": "rest", "url": server.url + PATH, "dimensions": DIMENSIONS, **REST_BATCH, **fields}


def _task(cluster: RunningCluster, response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 202, response.text
    return wait_task(cluster, response.json()["taskUid"], timeout=120)


def _settings(cluster: RunningCluster, index: str, embedders: dict[str, Any]) -> dict[str, Any]:
    url = f"{cluster.url}/indexes/{index}/settings"
    return _task(cluster, httpx.patch(url, json={"embedders": embedders}))


def _add(
    cluster: RunningCluster, index: str, docs: list[dict[str, Any]], update: bool = False
) -> dict[str, Any]:
    method = httpx.put if update else httpx.post
    return _task(cluster, method(f"{cluster.url}/indexes/{index}/documents", json=docs))


def _vectors(cluster: RunningCluster, index: str) -> dict[int, dict[str, Any]]:
    url = f"{cluster.url}/indexes/{index}/documents"
    docs = httpx.get(url, params={"retrieveVectors": "true", "limit": 1000}).json()["results"]
    return {doc["id"]: doc["_vectors"] for doc in docs}


def _stats(cluster: RunningCluster, index: str) -> tuple[int, int, int]:
    stats = httpx.get(f"{cluster.url}/indexes/{index}/stats").json()
    return stats["numberOfDocuments"], stats["numberOfEmbeddings"], stats["numberOfEmbeddedDocuments"]


def _texts(server: EmbeddingServer) -> int:
    return server.texts[PATH]


def _title_embedder(cluster: RunningCluster, server: EmbeddingServer, index: str) -> None:
    """Embedder ``r``: the REST server embeds each document's title."""
    task = _settings(cluster, index, {"r": _rest(server, documentTemplate="{{doc.title}}")})
    assert task["status"] == "succeeded", task


TITLES = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff", "ggggggg", "hhhhhhhh"]
DOCS = [{"id": i, "title": title, "n": i} for i, title in enumerate(TITLES)]


def test_documents_are_embedded_once_and_again_only_when_their_text_changes(
    cluster: RunningCluster, server: EmbeddingServer
) -> None:
    index = "generated-texts"
    _title_embedder(cluster, server, index)
    assert _add(cluster, index, DOCS)["status"] == "succeeded"
    assert _texts(server) == len(DOCS)
    assert _stats(cluster, index) == (8, 8, 8)
    shown = _vectors(cluster, index)
    expected = server.embed(["ccc"])[0]
    assert shown[2]["r"]["regenerate"] is True
    assert np.allclose(shown[2]["r"]["embeddings"][0], expected, atol=1e-6)

    assert _add(cluster, index, [{"id": 2, "n": 100}], update=True)["status"] == "succeeded"
    assert _texts(server) == len(DOCS), "a field the template does not show changes no text"
    assert _add(cluster, index, [{"id": 2, "title": "changed"}], update=True)["status"] == "succeeded"
    assert _texts(server) == len(DOCS) + 1
    assert np.allclose(
        _vectors(cluster, index)[2]["r"]["embeddings"][0], server.embed(["changed"])[0], atol=1e-6
    )
    assert _add(cluster, index, [{"id": 3, "title": "dddd"}])["status"] == "succeeded"
    assert _texts(server) == len(DOCS) + 1, "a replacement with the same text embeds nothing"


def test_user_provided_vectors_of_a_generated_embedder_are_kept_across_updates(
    cluster: RunningCluster, server: EmbeddingServer
) -> None:
    index = "generated-user"
    _title_embedder(cluster, server, index)
    mine = [0.5] * DIMENSIONS
    docs = [
        {"id": 1, "title": "one", "_vectors": {"r": mine}},
        {"id": 2, "title": "two", "_vectors": {"r": {"embeddings": [mine], "regenerate": False}}},
        {"id": 3, "title": "three", "_vectors": {"r": {"embeddings": mine, "regenerate": True}}},
        {"id": 4, "title": "four", "_vectors": {"r": None}},
        {"id": 5, "title": "five", "_vectors": {"r": {"regenerate": True}}},
    ]
    assert _add(cluster, index, docs)["status"] == "succeeded"
    assert _texts(server) == 1, "only document 5 asked to be generated"
    shown = _vectors(cluster, index)
    assert shown[1] == shown[2] == {"r": {"embeddings": [mine], "regenerate": False}}
    assert shown[3] == {"r": {"embeddings": [mine], "regenerate": True}}
    assert shown[4] == {"r": {"embeddings": [], "regenerate": False}}
    assert shown[5]["r"]["regenerate"] is True and len(shown[5]["r"]["embeddings"][0]) == DIMENSIONS
    changed = [{"id": i, "title": f"new {i}"} for i in range(1, 6)]
    assert _add(cluster, index, changed, update=True)["status"] == "succeeded"
    assert _texts(server) == 3, "3 (regenerate: true) and 5 follow their text; 1, 2, 4 keep theirs"
    after = _vectors(cluster, index)
    assert after[1] == shown[1] and after[2] == shown[2] and after[4] == shown[4]
    assert np.allclose(after[3]["r"]["embeddings"][0], server.embed(["new 3"])[0], atol=1e-6)
    stored = httpx.get(f"{cluster.url}/indexes/{index}/documents/1").json()
    assert stored == {"id": 1, "title": "new 1"}, "the embedder's entry is not part of the document"
    with_dims = _add(cluster, index, [{"id": 6, "title": "six", "_vectors": {"r": [1, 2]}}])
    assert with_dims["error"]["code"] == "invalid_vector_dimensions"
    assert with_dims["error"]["message"].endswith(
        f"embedding #0 has dimensions 2\n  - note: embedder `r` requires {DIMENSIONS}"
    )

    assert httpx.patch(f"{cluster.url}/experimental-features", json={"multimodal": True}).status_code == 200
    for condition, ids in (
        ("_vectors.r.documentTemplate EXISTS", [3, 5]),
        ("_vectors.r.userProvided EXISTS", [1, 2, 4]),
    ):
        hits = httpx.post(f"{cluster.url}/indexes/{index}/search", json={"filter": condition}).json()["hits"]
        assert sorted(hit["id"] for hit in hits) == ids, condition
    deletion = httpx.post(
        f"{cluster.url}/indexes/{index}/documents/delete", json={"filter": "_vectors.r.userProvided EXISTS"}
    )
    assert _task(cluster, deletion)["details"]["deletedDocuments"] == 3
    assert _stats(cluster, index) == (2, 2, 2)


def test_settings_changes_embed_what_they_must(cluster: RunningCluster, server: EmbeddingServer) -> None:
    index = "generated-settings"
    assert _add(cluster, index, DOCS)["status"] == "succeeded"
    _title_embedder(cluster, server, index)
    assert _texts(server) == len(DOCS), "a new embedder embeds every document"
    assert _settings(cluster, index, {"r": {"documentTemplateMaxBytes": 4}})["status"] == "succeeded"
    assert _texts(server) == len(DOCS) + 4, "only the 4 titles longer than 4 bytes render differently"
    assert np.allclose(
        _vectors(cluster, index)[7]["r"]["embeddings"][0], server.embed(["hhhh"])[0], atol=1e-6
    )
    assert _settings(cluster, index, {"r": {"documentTemplate": "{{doc.title}}"}})["status"] == "succeeded"
    assert _texts(server) == len(DOCS) + 4, "the same template: nothing to embed"
    assert _settings(cluster, index, {"r": {**REST_SINGLE}})["status"] == "succeeded"
    assert _texts(server) == 2 * len(DOCS) + 4, "another request shape regenerates every embedding"
    assert (
        _settings(cluster, index, {"s": _rest(server, documentTemplate="{{doc.n}}")})["status"] == "succeeded"
    )
    assert _texts(server) == 3 * len(DOCS) + 4
    assert _stats(cluster, index) == (8, 16, 8)
    assert _settings(cluster, index, {"r": None})["status"] == "succeeded"
    assert _stats(cluster, index) == (8, 8, 8)
    assert list(_vectors(cluster, index)[0]) == ["s"]
    mine = [0.25] * DIMENSIONS
    assert _add(cluster, index, [{"id": 0, "title": "a", "_vectors": {"s": mine}}])["status"] == "succeeded"
    assert (
        _settings(cluster, index, {"s": {"source": "userProvided", "dimensions": DIMENSIONS}})["status"]
        == "succeeded"
    )
    assert _stats(cluster, index) == (8, 1, 1), "generated embeddings cannot stay under userProvided"
    assert _vectors(cluster, index)[0]["s"] == {"embeddings": [mine], "regenerate": False}


def test_a_provider_failure_fails_its_task_and_stores_nothing(
    cluster: RunningCluster, server: EmbeddingServer
) -> None:
    index = "generated-failure"
    _title_embedder(cluster, server, index)
    assert _add(cluster, index, DOCS[:4])["status"] == "succeeded"
    server.fail_next(10, 400, b'{"error": "refused"}')
    task = _add(cluster, index, DOCS[4:])
    assert task["status"] == "failed"
    assert task["error"]["code"] == "vector_embedding_error"
    assert task["error"]["type"] == "invalid_request"
    assert task["error"]["message"].startswith(
        f"Index `{index}`: While embedding documents for embedder `r`: "
    )
    assert _stats(cluster, index) == (4, 4, 4), "neither the documents nor any vector of the failed task"
    server.reset()
    assert _add(cluster, index, DOCS[4:])["status"] == "succeeded"
    assert _stats(cluster, index) == (8, 8, 8)


def test_a_provider_failure_fails_the_settings_change_and_keeps_the_settings(
    cluster: RunningCluster, server: EmbeddingServer
) -> None:
    index = "generated-settings-failure"
    assert _add(cluster, index, DOCS)["status"] == "succeeded"
    server.fail_next(10, 400, b'{"error": "refused"}')
    task = _settings(cluster, index, {"r": _rest(server, documentTemplate="{{doc.title}}")})
    assert task["status"] == "failed"
    assert task["error"]["code"] == "vector_embedding_error"
    assert httpx.get(f"{cluster.url}/indexes/{index}/settings/embedders").json() == {}
    assert _stats(cluster, index) == (8, 0, 0)
    server.reset()
    _title_embedder(cluster, server, index)
    assert _stats(cluster, index) == (8, 8, 8)
