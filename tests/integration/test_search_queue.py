"""The search queue (search.md §0) on a real cluster: overflow answers 503, then searches work again.

The cluster runs with one search per core and a queue of one, so ``cpu count + 1`` searches can be
admitted at once; the test fires many times that many slow searches (large pages of a few thousand
documents, and multi-searches holding one slot for several such queries) all at once.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from common.errors import ApiError
from gateway.search.queue import SearchQueue
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

DOCS = [
    {"id": i, "title": f"common title {i}", "body": "lorem ipsum dolor sit amet " * 8} for i in range(3000)
]
BUSY = {
    "message": "Too many search requests running at the same time: 1. Retry after 10s.",
    "code": "too_many_search_requests",
    "type": "system",
    "link": "https://docs.meilisearch.com/errors#too_many_search_requests",
}


@pytest.fixture(scope="module")
def queued() -> Iterator[RunningCluster]:
    options = ("--experimental-search-queue-size", "1", "--experimental-nb-searches-per-core", "1")
    with RunningCluster(*options) as running:
        task = wait_task(running, client_for(running).index("docs").add_documents(DOCS).task_uid, timeout=120)
        assert task["status"] == "succeeded", task
        yield running


async def burst(cluster: RunningCluster, count: int) -> list[httpx.Response]:
    heavy: dict[str, Any] = {"q": "common", "limit": 1000}
    limits = httpx.Limits(max_connections=count)
    async with httpx.AsyncClient(base_url=cluster.url, timeout=60, limits=limits) as client:
        requests = [
            client.post("/indexes/docs/search", json=heavy)
            if n % 2
            else client.post("/multi-search", json={"queries": [{"indexUid": "docs", **heavy}] * 4})
            for n in range(count)
        ]
        return list(await asyncio.gather(*requests))


def test_overflow_is_refused_with_503_and_retry_after(queued: RunningCluster) -> None:
    admitted = len(os.sched_getaffinity(0)) + 1
    responses = asyncio.run(burst(queued, 8 * admitted + 16))
    refused = [response for response in responses if response.status_code == 503]
    served = [response for response in responses if response.status_code == 200]
    assert len(refused) + len(served) == len(responses), {r.status_code for r in responses}
    assert refused, "the burst never saturated the queue"
    assert len(served) >= admitted
    for response in refused:
        assert response.json() == BUSY
        assert response.headers["retry-after"] == "10"
        assert response.headers["access-control-allow-origin"] == "*"
    after = httpx.post(f"{queued.url}/indexes/docs/search", json={"q": "common", "limit": 1})
    assert after.status_code == 200, after.text
    assert len(after.json()["hits"]) == 1
    again = httpx.post(f"{queued.url}/multi-search", json={"queries": [{"indexUid": "docs", "limit": 1}]})
    assert again.status_code == 200, again.text


def test_waiting_searches_run_in_order_and_are_dropped_after_the_deadline() -> None:
    """In-process: slot hand-over and the deadline, too timing-dependent to provoke over HTTP."""
    refusal = "Too many search requests running at the same time: 2. Retry after 10s."

    async def scenario() -> list[str]:
        queue = SearchQueue(slots=1, queue_size=2, drop_after=0.5)
        events: list[str] = []

        async def search(name: str, seconds: float) -> None:
            try:
                async with queue.slot():
                    events.append(f"start {name}")
                    await asyncio.sleep(seconds)
            except ApiError as error:
                assert (error.status, error.message) == (503, refusal)
                events.append(f"503 {name}")

        first = asyncio.create_task(search("a", 0.2))
        await asyncio.sleep(0.01)
        others = [asyncio.create_task(search(name, 0.6)) for name in ("b", "c", "d")]
        await asyncio.gather(first, *others)
        assert (queue.running, queue.waiting) == (0, 0)
        async with queue.slot():
            events.append("start e")
        return events

    # d finds the queue full; b gets a's slot; c is still waiting for it after the deadline.
    assert asyncio.run(scenario()) == ["start a", "503 d", "start b", "503 c", "start e"]
