"""Searches share one gRPC stream per shard (``gateway/search_stream.py``): many at once must each get
their own answer, whatever order the shards finish them in, and a failing one must not touch the rest."""

from __future__ import annotations

import asyncio
import random
import string

import httpx

from tests.integration.search_support import make_index
from tests.support.cluster import RunningCluster

WORDS = sorted({"".join(random.Random(n).choices(string.ascii_lowercase, k=7)) for n in range(60)})


def test_concurrent_searches_each_get_their_own_hits(cluster: RunningCluster) -> None:
    documents = [{"id": n, "title": word} for n, word in enumerate(WORDS)]
    make_index(cluster, "streamed", documents, {"filterableAttributes": ["id"]})
    rng = random.Random(7)
    # Heavy and light searches interleaved, so that answers come back out of order.
    bodies = [
        {"q": word, "filter": f"id = {WORDS.index(word)}" if rng.random() < 0.5 else None} for word in WORDS
    ]
    bodies += [{"q": "", "limit": 1000}] * 10
    bodies.insert(30, {"q": WORDS[0], "filter": "title = x"})  # refused by the shards: not filterable
    rng.shuffle(bodies)

    async def send_all() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=cluster.url, timeout=60) as client:
            sends = [client.post("/indexes/streamed/search", json=body) for body in bodies]
            return await asyncio.gather(*sends)

    responses = asyncio.run(send_all())
    for body, response in zip(bodies, responses, strict=True):
        if body.get("filter") == "title = x":
            assert response.status_code == 400
            assert response.json()["code"] == "invalid_search_filter"
            continue
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["query"] == body["q"]
        if body["q"]:
            assert [hit["title"] for hit in answer["hits"]] == [body["q"]]
        else:
            assert len(answer["hits"]) == len(WORDS)
