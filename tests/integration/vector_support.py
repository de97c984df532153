"""Helpers shared by the semantic, hybrid and similar-documents tests.

``DOCS`` carry ``userProvided`` 3-d vectors chosen so that every similarity is known exactly; the
expectations of those tests are the reference engine's answers on the same documents (probed
black-box where search.md is silent): similarity ``(1 + cosine) / 2``, a document ranked by its best
embedding, documents without one last with a null similarity.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.cluster import RunningCluster

EMBEDDER = "e"
MEANINGS: list[dict[str, Any]] = [
    {"id": 1, "title": "The cat sat on the mat"},
    {"id": 2, "title": "A kitten chased a ball of yarn"},
    {"id": 3, "title": "Stock markets fell sharply today"},
    {"id": 4, "title": "Interest rates and inflation worries"},
    {"id": 5, "title": "The quarterly earnings report was strong"},
    {"id": 6, "title": "A puppy plays in the garden"},
]
"""Titles no keyword links and embedders tell apart: animals, money (the loopback providers' tests)."""
DOCS: list[dict[str, Any]] = [
    {"id": 1, "title": "red apple", "color": "red", "n": 1, "_vectors": {EMBEDDER: [1, 0, 0]}},
    {"id": 2, "title": "green apple", "color": "green", "n": 2, "_vectors": {EMBEDDER: [0.9, 0.1, 0]}},
    {"id": 3, "title": "blue sky", "color": "blue", "n": 3, "_vectors": {EMBEDDER: [0, 1, 0]}},
    {"id": 4, "title": "red car", "color": "red", "n": 4, "_vectors": {EMBEDDER: [0, 0, 1]}},
    {"id": 5, "title": "no vector apple", "color": "red", "n": 5, "_vectors": {EMBEDDER: None}},
    {"id": 6, "title": "opposite", "color": "x", "n": 6, "_vectors": {EMBEDDER: [-1, 0, 0]}},
    {
        "id": 7,
        "title": "two vectors apple",
        "color": "x",
        "n": 7,
        "_vectors": {EMBEDDER: [[0, 1, 0], [0.5, 0.5, 0]]},
    },
]
SETTINGS: dict[str, Any] = {
    "embedders": {EMBEDDER: {"source": "userProvided", "dimensions": 3}},
    "filterableAttributes": ["color", "n"],
    "sortableAttributes": ["n"],
}
GREEN = 0.996941864490509
"""The similarity of ``[0.9, 0.1, 0]`` to ``[1, 0, 0]`` (float32, as the reference computes it)."""
TWO_VECTORS = 0.8535534143447876
"""Document 7's best embedding ``[0.5, 0.5, 0]`` against ``[1, 0, 0]``."""
GREEN_TO_Y = 0.5552157759666443
"""``[0.9, 0.1, 0]`` against ``[0, 1, 0]``."""
APPLE, APPLE_LATER = 0.9242424242424242, 0.8787878787878788
"""The keyword scores of ``apple`` in ``red apple`` / ``green apple``, and in the longer titles."""


def semantic(vector: list[float], ratio: float = 1.0, **params: Any) -> dict[str, Any]:
    return {"vector": vector, "hybrid": {"embedder": EMBEDDER, "semanticRatio": ratio}, **params}


@pytest.fixture(params=["1 shard", "3 shards"], name="cluster")
def shard_count_cluster(
    request: pytest.FixtureRequest, clusters: tuple[RunningCluster, ...]
) -> RunningCluster:
    """Each test once on the module's 1-shard cluster, once on its 3-shard one (its ``clusters``
    fixture, ``search_support.one_and_three_shards``): the same answer is expected of both."""
    return clusters[0 if request.param == "1 shard" else 1]


def post(cluster: RunningCluster, path: str, body: Any) -> httpx.Response:
    return httpx.post(f"{cluster.url}{path}", json=body, timeout=60)


def scores(body: dict[str, Any]) -> list[float]:
    return [hit["_rankingScore"] for hit in body["hits"]]


def counts(body: dict[str, Any]) -> dict[str, Any]:
    """The response's fields but its hits and request uid and time."""
    return {k: v for k, v in body.items() if k not in ("hits", "requestUid", "processingTimeMs")}
