"""``openAi``, ``ollama`` and ``rest`` embedders against real loopback servers answering with the local
model's vectors: batching, keys and headers, dimensions, retries, failures and the outbound guard."""

from __future__ import annotations

import re
import socket
import time
from typing import Any

import numpy as np
import pytest

from common.outbound import AllowedNetworks
from shard.embedding import EmbeddingError, configure_outbound
from shard.embedding.ollama import OllamaEmbedder
from shard.embedding.openai import OpenAiEmbedder
from shard.embedding.rest import RestEmbedder
from tests.support.embedding_servers import REST_BATCH, REST_SINGLE, EmbeddingServer

USER_ERROR = "Error while generating embeddings: user error: "
RUNTIME_ERROR = "Error while generating embeddings: runtime error: "
TEXTS = [f"document {i} about {topic}" for i, topic in enumerate(["cats", "space", "cooking"] * 50)]


def _same_vectors(server: EmbeddingServer, vectors: np.ndarray, texts: list[str]) -> None:
    np.testing.assert_allclose(vectors, server.embed(texts), atol=1e-5)


def _rest(server: EmbeddingServer, shape: dict[str, Any], **extra: Any) -> RestEmbedder:
    return RestEmbedder({"source": "rest", "url": server.url + "/rest", **shape, **extra})


def test_openai_batches_sends_key_and_dimensions(server: EmbeddingServer) -> None:
    embedder = OpenAiEmbedder(
        {"source": "openAi", "model": "text-embedding-3-small", "url": server.url + "/v1/embeddings",
         "apiKey": "sk-test", "dimensions": 384}
    )  # fmt: skip
    server.api_key = "sk-test"
    vectors = embedder.embed_documents(TEXTS)
    assert vectors.shape == (150, 384) and vectors.dtype == np.float32
    _same_vectors(server, vectors, TEXTS)
    assert server.requests["/v1/embeddings"] == 3  # 64 texts per request
    assert server.last_body["dimensions"] == 384 and server.last_body["model"] == "text-embedding-3-small"


def test_openai_native_dimensions_and_no_override_for_ada(server: EmbeddingServer) -> None:
    embedder = OpenAiEmbedder(
        {
            "source": "openAi",
            "model": "text-embedding-ada-002",
            "url": server.url + "/v1/embeddings",
            "apiKey": "k",
        }
    )
    assert embedder.dimensions == 1536
    vector = embedder.embed_query("hello")
    assert vector.shape == (1536,)
    assert "dimensions" not in server.last_body
    np.testing.assert_allclose(vector[:384], server.embed(["hello"])[0], atol=1e-5)


def test_openai_key_falls_back_to_the_environment(
    server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = {"source": "openAi", "url": server.url + "/v1/embeddings", "dimensions": 384}
    server.api_key = "from-env"
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    monkeypatch.delenv("SEARCH_OPENAI_API_KEY", raising=False)
    OpenAiEmbedder(config).embed_query("x")
    monkeypatch.setenv("SEARCH_OPENAI_API_KEY", "search-key")
    with pytest.raises(EmbeddingError) as raised:
        OpenAiEmbedder(config).embed_query("x")  # the first variable wins, and is wrong here
    assert raised.value.message == (
        f"{USER_ERROR}embedding server `{server.url}/v1/embeddings` answered HTTP 401:\n"
        '  - server replied with `{"error":{"message":"Incorrect API key provided",'
        '"code":"invalid_api_key"}}`\n'
        "  - Hint: check the `apiKey` or `headers` of the embedder"
    )
    assert server.last_headers["authorization"] == "Bearer search-key"


def test_ollama_embed_batches_and_learns_dimensions(server: EmbeddingServer) -> None:
    embedder = OllamaEmbedder({"source": "ollama", "model": "all-minilm", "url": server.url + "/api/embed"})
    assert embedder.dimensions == 384  # one probe request
    vectors = embedder.embed_documents(TEXTS[:70])
    _same_vectors(server, vectors, TEXTS[:70])
    assert server.requests["/api/embed"] == 1 + 2
    assert server.last_body == {"model": "all-minilm", "input": TEXTS[64:70]}


def test_ollama_embeddings_sends_one_prompt_per_request(server: EmbeddingServer) -> None:
    embedder = OllamaEmbedder(
        {"source": "ollama", "model": "all-minilm", "url": server.url + "/api/embeddings", "dimensions": 384}
    )
    _same_vectors(server, embedder.embed_documents(TEXTS[:5]), TEXTS[:5])
    assert server.requests["/api/embeddings"] == 5
    assert server.last_body == {"model": "all-minilm", "prompt": TEXTS[4]}


def test_rest_batch_template_with_headers_and_key(server: EmbeddingServer) -> None:
    embedder = _rest(server, REST_BATCH, headers={"X-Tenant": "t1"}, apiKey="secret")
    assert embedder.dimensions == 384
    vectors = embedder.embed_documents(TEXTS[:100])
    _same_vectors(server, vectors, TEXTS[:100])
    assert server.requests["/rest"] == 1 + 2 and server.texts["/rest"] == 1 + 100
    assert server.last_headers["x-tenant"] == "t1" and server.last_headers["authorization"] == "Bearer secret"
    assert server.last_body == {"model": "minilm", "texts": TEXTS[64:100]}


def test_rest_single_template_sends_one_text_per_request(server: EmbeddingServer) -> None:
    embedder = _rest(server, REST_SINGLE, dimensions=384)
    _same_vectors(server, embedder.embed_documents(TEXTS[:3]), TEXTS[:3])
    assert server.requests["/rest"] == 3
    assert server.last_body == {"input": {"text": TEXTS[2]}}


def test_rest_wrong_dimensions_and_template_errors(server: EmbeddingServer) -> None:
    with pytest.raises(EmbeddingError) as raised:
        _rest(server, REST_SINGLE, dimensions=512).embed_query("x")
    assert raised.value.message == (
        f"{USER_ERROR}`{server.url}/rest` answered embeddings of 384 dimensions, the embedder has 512"
    )
    with pytest.raises(EmbeddingError, match=re.escape('in `request`: "{{text}}" not found')):
        _rest(server, {"request": {"t": "x"}, "response": REST_SINGLE["response"]})
    wrong_path = {"request": REST_SINGLE["request"], "response": {"result": {"values": "{{embedding}}"}}}
    with pytest.raises(EmbeddingError) as raised:
        _rest(server, wrong_path, dimensions=384).embed_query("x")
    assert raised.value.message == (
        f"{USER_ERROR}the answer of `{server.url}/rest` does not match `response`: in `response.result`: "
        "missing field `values`"
    )


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retries_then_succeeds(server: EmbeddingServer, status: int) -> None:
    embedder = _rest(server, REST_BATCH, dimensions=384)
    server.fail_next(3, status)
    _same_vectors(server, embedder.embed_documents(TEXTS[:2]), TEXTS[:2])
    assert server.requests["/rest"] == 4


def test_final_failure_names_the_last_answer(server: EmbeddingServer) -> None:
    embedder = _rest(server, REST_BATCH, dimensions=384)
    server.fail_next(6, 502, b"upstream model crashed " * 20)
    with pytest.raises(EmbeddingError) as raised:
        embedder.embed_documents(TEXTS[:2])
    assert server.requests["/rest"] == 6
    assert raised.value.code == "vector_embedding_error"
    assert raised.value.message == (
        f"{RUNTIME_ERROR}embedding server `{server.url}/rest` answered HTTP 502:\n  - server replied with `"
        + ("upstream model crashed " * 20)[:200]
        + "…`\n  - gave up after 6 attempts"
    )


def test_client_errors_are_not_retried(server: EmbeddingServer) -> None:
    embedder = _rest(server, REST_BATCH, dimensions=384)
    server.fail_next(1, 400, b'{"error": "bad input"}')
    with pytest.raises(EmbeddingError) as raised:
        embedder.embed_documents(["x"])
    assert raised.value.message == (
        f"{USER_ERROR}embedding server `{server.url}/rest` answered HTTP 400:\n"
        '  - server replied with `{"error": "bad input"}`'
    )
    assert server.requests["/rest"] == 1


def test_connection_failures_are_retried_then_reported() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/rest"
    started = time.monotonic()
    with pytest.raises(EmbeddingError) as raised:
        RestEmbedder({"source": "rest", "url": url, **REST_SINGLE})
    assert raised.value.message == (
        f"{RUNTIME_ERROR}could not determine model dimensions:\n"
        "  - test embedding failed with runtime error: "
        f"could not reach embedding server `{url}`:\n  - [Errno 111] Connection refused\n"
        "  - gave up after 6 attempts"
    )
    assert time.monotonic() - started < 10


def test_slow_answers_are_waited_for(server: EmbeddingServer) -> None:
    embedder = _rest(server, REST_SINGLE, dimensions=384)
    server.delay_s = 0.5
    started = time.monotonic()
    embedder.embed_query("x")
    assert time.monotonic() - started >= 0.5


def test_the_guard_refuses_loopback_unless_allowed(server: EmbeddingServer) -> None:
    configure_outbound(AllowedNetworks())
    with pytest.raises(EmbeddingError) as raised:
        _rest(server, REST_SINGLE, dimensions=384).embed_query("x")
    assert raised.value.message == (
        f"{RUNTIME_ERROR}could not reach embedding server `{server.url}/rest`:\n"
        "  - `127.0.0.1` resolves to 127.0.0.1, which is not a public address; allow its network with "
        "`--experimental-allowed-ip-networks`"
    )
    assert server.requests["/rest"] == 0
    configure_outbound(AllowedNetworks.from_option("10.0.0.0/8"))
    with pytest.raises(EmbeddingError, match="not a public address"):
        OllamaEmbedder(
            {
                "source": "ollama",
                "model": "m",
                "url": server.url.replace("127.0.0.1", "localhost") + "/api/embed",
            }
        )
    configure_outbound(AllowedNetworks.from_option("any"))
    assert _rest(server, REST_SINGLE, dimensions=384).embed_query("x").shape == (384,)
