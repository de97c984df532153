"""Every embedder source of the contract (search.md §6.11) embedding documents and queries through the
cluster, against real providers on loopback (``tests/support/embedding_servers.py``, all answering with
the local MiniLM's vectors): OpenAI, both Ollama routes, a custom REST shape with its ``headers``, and a
composite embedder indexing through REST and searching with the local model. Each must find the cat
and the kitten for "feline animals", which no keyword matches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.search_support import make_index
from tests.integration.vector_support import MEANINGS
from tests.support.client import client_for, switch_features, wait_task
from tests.support.cluster import RunningCluster
from tests.support.embedding_servers import DIMENSIONS, MINILM, REST_BATCH, EmbeddingServer

TEMPLATE = {"documentTemplate": "{{doc.title}}"}
KEY = "sk-test-key"


def _sources(url: str) -> dict[str, dict[str, Any]]:
    rest = {"source": "rest", "url": f"{url}/rest", "dimensions": DIMENSIONS, **REST_BATCH}
    return {
        "openai": {
            "source": "openAi",
            "url": f"{url}/v1/embeddings",
            "apiKey": KEY,
            "model": "text-embedding-3-small",
            "dimensions": DIMENSIONS,
            **TEMPLATE,
        },
        "ollama-embed": {"source": "ollama", "url": f"{url}/api/embed", "model": "minilm", **TEMPLATE},
        "ollama-embeddings": {
            "source": "ollama",
            "url": f"{url}/api/embeddings",
            "model": "minilm",
            **TEMPLATE,
        },
        "rest": {**rest, "headers": {"X-Team": "search"}, **TEMPLATE},
        "composite": {
            "source": "composite",
            "indexingEmbedder": {**rest, **TEMPLATE},
            "searchEmbedder": MINILM,
        },
    }


@pytest.fixture(scope="module")
def cluster(embedding_server: EmbeddingServer) -> Iterator[RunningCluster]:
    with RunningCluster("--experimental-allowed-ip-networks", "127.0.0.0/8", shards=1) as running:
        switch_features(running, compositeEmbedders=True)
        yield running


@pytest.mark.parametrize("source", ["openai", "ollama-embed", "ollama-embeddings", "rest", "composite"])
def test_each_source_embeds_documents_and_queries(
    cluster: RunningCluster, embedding_server: EmbeddingServer, source: str
) -> None:
    embedding_server.reset()
    embedder = _sources(embedding_server.url)[source]
    if source == "openai":
        embedding_server.api_key = KEY  # refused without it: the key is sent
    make_index(cluster, source, MEANINGS, {"embedders": {"e": embedder}})
    stats = httpx.get(f"{cluster.url}/indexes/{source}/stats").json()
    assert (stats["numberOfEmbeddings"], stats["numberOfEmbeddedDocuments"]) == (len(MEANINGS), len(MEANINGS))
    response = httpx.post(
        f"{cluster.url}/indexes/{source}/search",
        json={"q": "feline animals", "hybrid": {"embedder": "e", "semanticRatio": 1.0}, "limit": 2},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    assert {hit["id"] for hit in response.json()["hits"]} == {1, 2}
    if source == "rest":
        assert embedding_server.last_headers.get("x-team") == "search"
    embedding_server.reset()


def test_a_distribution_maps_similarities_into_scores(cluster: RunningCluster) -> None:
    """``distribution {mean, sigma}`` turns the similarity ``s = (1 + cos) / 2`` into
    ``clamp(0.4 / sigma * s + 0.5 - 0.4 / sigma * mean, epsilon, 1)`` (search.md §6.11)."""
    docs = [{"id": 1, "_vectors": {"e": [0.6, 0.8]}}, {"id": 2, "_vectors": {"e": [-0.6, 0.8]}}]
    scores = {}
    for uid, distribution in (("plain", None), ("shifted", {"mean": 0.7, "sigma": 0.2})):
        embedder: dict[str, Any] = {"source": "userProvided", "dimensions": 2}
        if distribution is not None:
            embedder["distribution"] = distribution
        make_index(cluster, uid, docs, {"embedders": {"e": embedder}})
        body = {
            "vector": [1.0, 0.0],
            "hybrid": {"embedder": "e", "semanticRatio": 1.0},
            "showRankingScore": True,
        }
        hits = httpx.post(f"{cluster.url}/indexes/{uid}/search", json=body).json()["hits"]
        scores[uid] = {hit["id"]: hit["_rankingScore"] for hit in hits}
    assert scores["plain"] == pytest.approx({1: 0.8, 2: 0.2}, abs=1e-6)
    assert scores["shifted"] == pytest.approx({1: 2 * 0.8 + 0.5 - 2 * 0.7, 2: 0.0}, abs=1e-6)


def test_a_busy_provider_is_retried(cluster: RunningCluster, embedding_server: EmbeddingServer) -> None:
    """429 and 5xx answers are retried with backoff: the documents are embedded all the same."""
    embedding_server.reset()
    embedder = _sources(embedding_server.url)["rest"]
    index = client_for(cluster).index("busy")
    assert wait_task(cluster, index.update_embedders({"e": embedder}).task_uid)["status"] == "succeeded"
    embedding_server.fail_next(1, 429)
    embedding_server.fail_next(1, 503)
    make_index(cluster, "busy", MEANINGS)
    assert embedding_server.requests["/rest"] == 3  # one batch of six texts, answered the third time
    stats = httpx.get(f"{cluster.url}/indexes/busy/stats").json()
    assert stats["numberOfEmbeddedDocuments"] == len(MEANINGS)
    embedding_server.reset()
