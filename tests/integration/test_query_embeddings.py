"""Query texts embedded for semantic and hybrid searches: the local MiniLM, a loopback REST provider,
the cache of query embeddings (``--experimental-embedding-cache-entries``) and embedding failures
(search.md §1.9, §7.6 step 3)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.search_support import make_index
from tests.integration.vector_support import MEANINGS as DOCS
from tests.support.client import switch_features, wait_task
from tests.support.cluster import RunningCluster
from tests.support.embedding_servers import MINILM, REST_SINGLE, EmbeddingServer

LOOPBACK = ("--experimental-allowed-ip-networks", "127.0.0.0/8")
TEMPLATE = {"documentTemplate": "{{doc.title}}"}


def _rest(server: EmbeddingServer) -> dict[str, Any]:
    return {"source": "rest", "url": f"{server.url}/rest", **REST_SINGLE, **TEMPLATE}


@pytest.fixture(scope="module")
def cached(embedding_server: EmbeddingServer) -> Iterator[RunningCluster]:
    """One shard (so every text meets the same cache) keeping 2 query embeddings per embedder."""
    with RunningCluster(*LOOPBACK, "--experimental-embedding-cache-entries", "2", shards=1) as cluster:
        for uid in ("rest-a", "rest-b"):
            make_index(cluster, uid, DOCS, {"embedders": {"e": _rest(embedding_server)}})
        make_index(cluster, "minilm", DOCS, {"embedders": {"mini": {**MINILM, **TEMPLATE}}})
        yield cluster


def search(cluster: RunningCluster, uid: str, **params: Any) -> httpx.Response:
    return httpx.post(f"{cluster.url}/indexes/{uid}/search", json=params, timeout=60)


def _ids(response: httpx.Response) -> list[int]:
    assert response.status_code == 200, response.text
    return [hit["id"] for hit in response.json()["hits"]]


def test_hybrid_search_with_the_local_model(cached: RunningCluster) -> None:
    """No keyword matches `feline animals`; the model finds the cat and the kitten first."""
    response = search(cached, "minilm", q="feline animals", hybrid={"embedder": "mini"})
    assert set(_ids(response)[:2]) == {1, 2}
    assert response.json()["semanticHitCount"] == 6
    response = search(cached, "minilm", q="economy news", hybrid={"embedder": "mini", "semanticRatio": 0.8})
    assert set(_ids(response)[:3]) == {3, 4, 5}
    # `cat` matches one title by keyword; the kitten comes right after it, by meaning.
    response = search(cached, "minilm", q="cat", hybrid={"embedder": "mini"}, retrieveVectors=True)
    assert _ids(response)[:2] == [1, 2]
    assert len(response.json()["queryVector"]) == 384


def test_repeated_texts_are_embedded_once(cached: RunningCluster, embedding_server: EmbeddingServer) -> None:
    """The cache is per configuration, so two indexes with the same embedder share it; it keeps the
    2 most recently used texts."""
    embedding_server.reset()
    semantic = {"hybrid": {"embedder": "e", "semanticRatio": 1.0}}

    def embedded() -> int:
        return embedding_server.texts["/rest"]

    assert _ids(search(cached, "rest-a", q="kitty", **semantic))[:2] in ([1, 2], [2, 1])
    assert embedded() == 1
    search(cached, "rest-a", q="kitty", **semantic)
    search(cached, "rest-b", q="kitty", **semantic)
    assert embedded() == 1
    search(cached, "rest-a", q="economy news", **semantic)
    search(cached, "rest-a", q="cat", **semantic)
    assert embedded() == 3
    search(cached, "rest-a", q="cat", **semantic)
    assert embedded() == 3
    search(cached, "rest-a", q="kitty", **semantic)  # evicted by the two texts since
    assert embedded() == 4


def test_without_cache_every_search_embeds(embedding_server: EmbeddingServer) -> None:
    with RunningCluster(*LOOPBACK, shards=2) as cluster:
        make_index(cluster, "rest", DOCS, {"embedders": {"e": _rest(embedding_server)}})
        embedding_server.reset()
        for _ in range(3):
            assert (
                search(cluster, "rest", q="kitty", hybrid={"embedder": "e", "semanticRatio": 1.0}).status_code
                == 200
            )
        assert embedding_server.texts["/rest"] == 3


def test_embedding_failures(cached: RunningCluster, embedding_server: EmbeddingServer) -> None:
    """A provider refusing the query: semantic-only searches fail with ``vector_embedding_error``,
    hybrid ones answer with their keyword hits."""
    embedding_server.reset()
    embedding_server.fail_next(2, 400, b'{"error": "refused"}')
    response = search(cached, "rest-a", q="refused text", hybrid={"embedder": "e", "semanticRatio": 1.0})
    assert response.status_code == 400, response.text
    error = response.json()
    assert (error["code"], error["type"]) == ("vector_embedding_error", "invalid_request")
    assert error["message"].startswith("Error while generating embeddings: ")
    assert "400" in error["message"]
    response = search(cached, "rest-a", q="kitten refused", hybrid={"embedder": "e"})
    assert _ids(response) == [2]
    assert (response.json()["estimatedTotalHits"], response.json()["semanticHitCount"]) == (1, 0)


def test_a_pinning_rule_does_not_embed_the_query_twice(embedding_server: EmbeddingServer) -> None:
    """A dynamic search rule that pins makes the gateway search again (gateway/search/single.py):
    the second search takes the vector the first one embedded."""
    with RunningCluster(*LOOPBACK, shards=2) as cluster:
        make_index(cluster, "rest", DOCS, {"embedders": {"e": _rest(embedding_server)}})
        switch_features(cluster, dynamicSearchRules=True)
        rule = {
            "conditions": {"query": {"words": "kitty"}},
            "actions": [{"selector": {"id": "3"}, "action": {"type": "pin", "position": 0}}],
        }
        response = httpx.patch(f"{cluster.url}/dynamic-search-rules/promo", json=rule)
        assert wait_task(cluster, response.json()["taskUid"])["status"] == "succeeded"
        embedding_server.reset()
        response = search(cluster, "rest", q="kitty", hybrid={"embedder": "e", "semanticRatio": 1.0})
        assert _ids(response)[0] == 3
        assert embedding_server.texts["/rest"] == 1
