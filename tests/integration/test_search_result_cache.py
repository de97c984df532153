"""Shards keep search replies until their next batch (``shard/search_results.py``): a repeated search is
answered from memory, and never with an answer a write, a settings change, a swap or a deletion made
stale. Hits are read from ``sift_shard_search_result_cache_hits_total``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.search_support import make_index
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

SHARDS = 2
BOOKS = [{"id": k, "title": f"blue book {k}", "genre": "novel" if k % 2 else "essay"} for k in range(10)]


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster("--experimental-enable-metrics", shards=SHARDS) as running:
        yield running


def cache_hits(cluster: RunningCluster) -> float:
    text = httpx.get(f"{cluster.url}/metrics", timeout=30).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "sift_shard_search_result_cache_hits_total"
    )


def search(cluster: RunningCluster, uid: str, **body: Any) -> dict[str, Any]:
    response = httpx.post(f"{cluster.url}/indexes/{uid}/search", json=body, timeout=30)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def done(cluster: RunningCluster, task: Any) -> None:
    assert wait_task(cluster, task.task_uid)["status"] == "succeeded"


def test_a_repeated_search_is_answered_from_the_shards_cache(cluster: RunningCluster) -> None:
    make_index(cluster, "cache_repeat", BOOKS, {"filterableAttributes": ["genre"]})
    body = {"q": "blue boo", "filter": "genre = novel", "facets": ["genre"]}
    first = search(cluster, "cache_repeat", **body)
    before = cache_hits(cluster)
    again = search(cluster, "cache_repeat", **body)
    assert cache_hits(cluster) == before + SHARDS
    assert again["hits"] == first["hits"]
    assert again["facetDistribution"] == first["facetDistribution"] == {"genre": {"novel": 5}}
    assert again["estimatedTotalHits"] == 5
    # Another page is another search; timings are never kept.
    search(cluster, "cache_repeat", **body, offset=1)
    search(cluster, "cache_repeat", **body, showPerformanceDetails=True)
    search(cluster, "cache_repeat", **body, showPerformanceDetails=True)
    assert cache_hits(cluster) == before + SHARDS


def test_documents_added_changed_and_deleted_are_seen_at_once(cluster: RunningCluster) -> None:
    index = client_for(cluster).index(make_index(cluster, "cache_writes", BOOKS))
    assert search(cluster, "cache_writes", q="green")["hits"] == []
    search(cluster, "cache_writes", q="green")  # now kept
    done(cluster, index.add_documents([{"id": 3, "title": "green book"}]))
    assert [hit["id"] for hit in search(cluster, "cache_writes", q="green")["hits"]] == [3]
    done(cluster, index.update_documents([{"id": 3, "title": "green book, second edition"}]))
    assert search(cluster, "cache_writes", q="green")["hits"][0]["title"] == "green book, second edition"
    done(cluster, index.delete_document(3))
    assert search(cluster, "cache_writes", q="green")["hits"] == []
    assert search(cluster, "cache_writes", q="blue")["estimatedTotalHits"] == 9


def test_a_settings_change_is_seen_at_once(cluster: RunningCluster) -> None:
    settings = {"searchableAttributes": ["title"]}
    index = client_for(cluster).index(make_index(cluster, "cache_settings", BOOKS, settings))
    for _ in range(2):
        assert search(cluster, "cache_settings", q="novel")["hits"] == []
    done(cluster, index.update_searchable_attributes(["genre"]))
    assert search(cluster, "cache_settings", q="novel")["estimatedTotalHits"] == 5
    assert search(cluster, "cache_settings", q="blue")["hits"] == []


def test_a_swap_and_a_deletion_are_seen_at_once(cluster: RunningCluster) -> None:
    make_index(cluster, "cache_left", BOOKS)
    make_index(cluster, "cache_right", [{"id": 1, "title": "red book"}])
    for _ in range(2):
        assert search(cluster, "cache_left", q="book")["estimatedTotalHits"] == 10
    done(cluster, client_for(cluster).swap_indexes([{"indexes": ["cache_left", "cache_right"]}]))
    assert [hit["title"] for hit in search(cluster, "cache_left", q="book")["hits"]] == ["red book"]
    done(cluster, client_for(cluster).delete_index("cache_left"))
    make_index(cluster, "cache_left", [{"id": 2, "title": "white book"}])
    assert [hit["title"] for hit in search(cluster, "cache_left", q="book")["hits"]] == ["white book"]
