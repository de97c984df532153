"""``embedder_for``: sources, composite sides, memoisation; ``regeneration_key`` per search.md §6.11."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

from common.settings.embedders import resolved_embedder
from shard.embedding import Embedder, EmbeddingError, check_composite, embedder_for, regeneration_key
from tests.support.embedding_servers import MINILM, REST_BATCH, EmbeddingServer


def test_user_provided_embeds_nothing() -> None:
    with pytest.raises(ValueError, match="userProvided"):
        embedder_for(resolved_embedder({"source": "userProvided", "dimensions": 3}))


def test_composite_picks_its_side(server: EmbeddingServer) -> None:
    config = resolved_embedder(
        {
            "source": "composite",
            "searchEmbedder": MINILM,
            "indexingEmbedder": {"source": "rest", "url": server.url + "/rest", **REST_BATCH},
        }
    )
    indexing = embedder_for(config, side="indexing")
    search = embedder_for(config, side="search")
    assert indexing is not search and indexing.dimensions == search.dimensions == 384
    assert search is embedder_for(resolved_embedder(MINILM))  # the search side is the local model itself
    text = "a composite embedder produces the same vectors on both sides"
    np.testing.assert_allclose(indexing.embed_documents([text])[0], search.embed_query(text), atol=1e-5)


def test_memoised_per_shaping_fields(server: EmbeddingServer) -> None:
    local = embedder_for(resolved_embedder({**MINILM, "documentTemplate": "{{doc.a}}"}))
    assert local is embedder_for(resolved_embedder({**MINILM, "distribution": {"mean": 0.5, "sigma": 0.2}}))
    assert local is not embedder_for(resolved_embedder({**MINILM, "pooling": "forceCls"}))
    rest: dict[str, Any] = {"source": "rest", "url": server.url + "/rest", **REST_BATCH, "dimensions": 384}
    first = embedder_for(resolved_embedder(rest))
    assert first is embedder_for(resolved_embedder({**rest, "documentTemplateMaxBytes": 10}))
    assert first is not embedder_for(resolved_embedder({**rest, "headers": {"X-A": "b"}}))
    assert server.requests["/rest"] == 0  # dimensions given: no probe


def test_concurrent_first_uses_build_one_embedder(server: EmbeddingServer) -> None:
    config = resolved_embedder({"source": "ollama", "model": "concurrent", "url": server.url + "/api/embed"})
    built: list[Embedder] = []
    threads = [threading.Thread(target=lambda: built.append(embedder_for(config))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(embedder) for embedder in built}) == 1
    assert server.requests["/api/embed"] == 1  # one dimension probe


def test_failed_builds_are_not_remembered(server: EmbeddingServer) -> None:
    config = resolved_embedder({"source": "ollama", "model": "flaky", "url": server.url + "/api/embeddings"})
    server.fail_next(1, 404, b'{"error":"model \\"flaky\\" not found, try pulling it first"}')
    with pytest.raises(EmbeddingError) as raised:
        embedder_for(config)
    assert raised.value.message == (
        "Error while generating embeddings: user error: could not determine model dimensions:\n"
        f"  - test embedding failed with user error: embedding server `{server.url}/api/embeddings` answered "
        'HTTP 404:\n  - server replied with `{"error":"model \\"flaky\\" not found, try pulling it first"}`'
    )
    assert embedder_for(config).dimensions == 384


def test_unknown_openai_model() -> None:
    with pytest.raises(EmbeddingError) as raised:
        embedder_for(resolved_embedder({"source": "openAi", "model": "gpt-4"}))
    assert raised.value.message == (
        "Error while generating embeddings: user error: Invalid model `gpt-4` for OpenAI. Supported models: "
        "['text-embedding-ada-002', 'text-embedding-3-small', 'text-embedding-3-large']"
    )


def _key(embedder: dict[str, Any]) -> str:
    return regeneration_key(resolved_embedder(embedder))


@pytest.mark.parametrize(
    ("before", "after", "regenerates"),
    [
        ({"source": "huggingFace"}, {"source": "huggingFace", "model": MINILM["model"]}, True),
        ({"source": "huggingFace"}, {"source": "huggingFace", "revision": "abc"}, True),
        ({"source": "huggingFace"}, {"source": "huggingFace", "pooling": "forceCls"}, True),
        ({"source": "huggingFace"}, {"source": "huggingFace", "pooling": "useModel"}, False),  # the default
        ({"source": "huggingFace"}, {"source": "huggingFace", "documentTemplate": "{{doc.a}}"}, False),
        ({"source": "openAi"}, {"source": "openAi", "dimensions": 512}, True),
        ({"source": "openAi"}, {"source": "openAi", "model": "text-embedding-3-large"}, True),
        ({"source": "openAi"}, {"source": "openAi", "apiKey": "k", "url": "http://a/"}, False),
        ({"source": "openAi"}, {"source": "huggingFace"}, True),
        ({"source": "ollama", "model": "m"}, {"source": "ollama", "model": "m", "url": "http://a/api/embed"},
         True),
        ({"source": "ollama", "model": "m"}, {"source": "ollama", "model": "m", "dimensions": 3}, False),
        (
            {"source": "rest", "url": "http://a", **REST_BATCH},
            {"source": "rest", "url": "http://a", **REST_BATCH, "response": {"e": "{{embedding}}"}},
            False,
        ),
        (
            {"source": "rest", "url": "http://a", **REST_BATCH},
            {"source": "rest", "url": "http://a", **REST_BATCH, "headers": {"a": "b"}, "dimensions": 3},
            False,
        ),
        (
            {"source": "rest", "url": "http://a", **REST_BATCH},
            {"source": "rest", "url": "http://a", **REST_BATCH, "request": {"t": "{{text}}"}},
            True,
        ),
        (
            {"source": "rest", "url": "http://a", **REST_BATCH},
            {"source": "rest", "url": "http://b", **REST_BATCH},
            True,
        ),
        (
            {"source": "userProvided", "dimensions": 3},
            {"source": "userProvided", "dimensions": 3, "distribution": {"mean": 0.5, "sigma": 0.1}},
            False,
        ),
        (
            {"source": "composite", "searchEmbedder": {"source": "huggingFace"}, "indexingEmbedder": MINILM},
            {"source": "composite", "searchEmbedder": MINILM, "indexingEmbedder": MINILM},
            False,
        ),
        (
            {"source": "composite", "searchEmbedder": MINILM, "indexingEmbedder": {"source": "huggingFace"}},
            {"source": "composite", "searchEmbedder": MINILM, "indexingEmbedder": MINILM},
            True,
        ),
    ],
)  # fmt: skip
def test_regeneration_key(before: dict[str, Any], after: dict[str, Any], regenerates: bool) -> None:
    assert (_key(before) != _key(after)) is regenerates


def test_a_slow_build_does_not_hold_up_other_embedders(server: EmbeddingServer) -> None:
    slow = resolved_embedder({"source": "ollama", "model": "slow", "url": server.url + "/api/embed"})
    server.delay_s = 1.0
    probing = threading.Thread(target=embedder_for, args=(slow,))
    probing.start()
    time.sleep(0.2)  # the probe is waiting for its answer
    started = time.monotonic()
    embedder_for(
        resolved_embedder({"source": "ollama", "model": "other", "url": server.url, "dimensions": 3})
    )
    assert time.monotonic() - started < 0.5
    probing.join()


def test_check_composite_accepts_the_same_model_behind_both_sides(server: EmbeddingServer) -> None:
    rest = {"source": "rest", "url": server.url + "/rest", **REST_BATCH, "dimensions": 384}
    check_composite(
        resolved_embedder({"source": "composite", "searchEmbedder": MINILM, "indexingEmbedder": rest})
    )


def test_check_composite_refuses_sides_that_disagree(server: EmbeddingServer) -> None:
    cls = {**MINILM, "pooling": "forceCls"}
    with pytest.raises(EmbeddingError) as raised:
        check_composite(
            resolved_embedder({"source": "composite", "searchEmbedder": MINILM, "indexingEmbedder": cls})
        )
    assert raised.value.message.startswith(
        "Error while generating embeddings: user error: composite embedder: the search and indexing "
        "embedders do not produce the same vectors:\n  - cosine distance 0."
    )
    ollama = {"source": "ollama", "model": "m", "url": server.url + "/api/embed", "dimensions": 3}
    with pytest.raises(
        EmbeddingError, match="the indexing embedder produces 3 dimensions, the search embedder 384"
    ):
        check_composite(
            resolved_embedder({"source": "composite", "searchEmbedder": MINILM, "indexingEmbedder": ollama})
        )
