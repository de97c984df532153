"""``federation.distinct`` (search.md §2.3): one hit per value of the attribute across every query.

Two indexes share part of the books: the expected list is the federated list without distinct,
walked best first, keeping a hit unless it shares a value with a kept one (a document with an array
value excludes every later one sharing any of its values, §1.8).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.integration.search_support import make_index
from tests.support.cluster import REPO_ROOT, RunningCluster

DATASETS = REPO_ROOT.parent / "shared" / "datasets"
BOOKS = json.loads((DATASETS / "sdk-fixtures" / "docs-books.json").read_bytes())
SETTINGS = {"filterableAttributes": ["author", "genres"], "sortableAttributes": ["rating"]}
BY_RATING = [
    {"indexUid": "shelf_a", "sort": ["rating:desc"]},
    {"indexUid": "shelf_b", "sort": ["rating:desc"]},
]


@pytest.fixture(scope="module")
def shelves(cluster: RunningCluster) -> RunningCluster:
    make_index(cluster, "shelf_a", BOOKS[:8], SETTINGS)
    make_index(cluster, "shelf_b", BOOKS[4:], SETTINGS)
    make_index(cluster, "unfiltered", BOOKS)
    tags = {"filterableAttributes": ["tags"], "sortableAttributes": ["rank"]}
    single_tags = [{"id": i, "tags": [tag], "rank": 10 - i} for i, tag in enumerate("xyzw")]
    make_index(cluster, "tags_a", single_tags, tags)
    make_index(cluster, "tags_b", [{"id": 9, "tags": ["x", "y", "z"], "rank": 11}], tags)
    return cluster


def federated(cluster: RunningCluster, queries: list[dict[str, Any]], **federation: Any) -> httpx.Response:
    body = {"queries": queries, "federation": federation}
    return httpx.post(f"{cluster.url}/multi-search", json=body, timeout=30)


def federated_ok(cluster: RunningCluster, queries: list[dict[str, Any]], **federation: Any) -> dict[str, Any]:
    response = federated(cluster, queries, **federation)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def identities(hits: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(hit["_federation"]["indexUid"], hit["id"]) for hit in hits]


def greedy(hits: list[dict[str, Any]], attribute: str) -> list[tuple[str, int]]:
    seen: set[str] = set()
    kept = []
    for hit in hits:
        value = hit[attribute]
        values = set(value if isinstance(value, list) else [value])
        if not values & seen:
            seen |= values
            kept.append((hit["_federation"]["indexUid"], hit["id"]))
    return kept


def test_one_hit_per_author_across_indexes(shelves: RunningCluster) -> None:
    everything = federated_ok(shelves, BY_RATING, limit=100)["hits"]
    expected = greedy(everything, "author")
    assert len(expected) < len(everything), "the shelves share authors"
    body = federated_ok(shelves, BY_RATING, limit=100, distinct="author")
    assert identities(body["hits"]) == expected
    # Every hit was fetched, so the total is exact: one per author.
    assert body["estimatedTotalHits"] == len({book["author"] for book in BOOKS}) == len(expected)
    window = federated_ok(shelves, BY_RATING, offset=1, limit=3, distinct="author")
    assert identities(window["hits"]) == expected[1:4]
    paged = federated_ok(shelves, BY_RATING, page=2, hitsPerPage=4, distinct="author")
    assert identities(paged["hits"]) == expected[4:8]


@pytest.mark.parametrize("limit", [1, 2, 3, 5])
def test_array_values_exclude_every_shared_value_and_pages_agree(shelves: RunningCluster, limit: int) -> None:
    """A hit whose genres are all new is kept; one sharing any genre is dropped. A small page asks the
    queries again when dropped hits leave it short, so it is the head of the whole list."""
    whole = federated_ok(shelves, BY_RATING, limit=100, distinct="genres")["hits"]
    genres = [genre for hit in whole for genre in hit["genres"]]
    assert len(genres) == len(set(genres)), "no two hits share a genre"
    page = federated_ok(shelves, BY_RATING, limit=limit, distinct="genres")
    assert identities(page["hits"]) == identities(whole)[:limit]


def test_a_page_emptied_by_array_values_asks_the_queries_again(shelves: RunningCluster) -> None:
    """The best hit has tags x, y and z: it drops the first three hits of the other index, so a
    two-hit page needs that index's fourth hit, which the first round did not fetch."""
    queries = [{"indexUid": "tags_a", "sort": ["rank:desc"]}, {"indexUid": "tags_b", "sort": ["rank:desc"]}]
    body = federated_ok(shelves, queries, limit=2, distinct="tags")
    assert identities(body["hits"]) == [("tags_b", 9), ("tags_a", 3)]
    assert body["estimatedTotalHits"] == 2, "4 + 1 candidates, minus the 3 hits x, y and z drop"
    for federation in ({"limit": 0}, {"hitsPerPage": 0}):
        empty = federated_ok(shelves, queries, distinct="tags", **federation)
        assert empty["hits"] == [], "an empty page asks nothing more"


def test_an_index_named_twice_counts_what_distinct_keeps(shelves: RunningCluster) -> None:
    """Its queries' distinct counts, less the hits found twice: not the union of their candidates,
    which would count every book distinct drops."""
    queries = [{"indexUid": "shelf_b", "sort": ["rating:desc"]}, {"indexUid": "shelf_b", "q": "the"}]
    body = federated_ok(shelves, queries, limit=100, distinct="genres")
    assert 0 < len(body["hits"]) < len(BOOKS[4:])
    assert body["estimatedTotalHits"] == len(body["hits"]), "every hit fetched: the count is exact"


def test_an_index_with_a_distinct_setting_counts_what_distinct_keeps(cluster: RunningCluster) -> None:
    """The same with the index's ``distinctAttribute`` setting instead of ``federation.distinct``: the
    gateway learns from the shards' replies that the queries deduplicated."""
    make_index(
        cluster, "shelf_distinct", BOOKS, {"distinctAttribute": "genres", "sortableAttributes": ["rating"]}
    )
    queries = [
        {"indexUid": "shelf_distinct", "sort": ["rating:desc"]},
        {"indexUid": "shelf_distinct", "q": "the"},
    ]
    body = federated_ok(cluster, queries, limit=100)
    assert 0 < len(body["hits"]) < len(BOOKS)
    assert body["estimatedTotalHits"] == len(body["hits"]), "every hit fetched: the count is exact"


def test_distinct_attribute_must_be_filterable_in_every_index(shelves: RunningCluster) -> None:
    queries = [{"indexUid": "shelf_a"}, {"indexUid": "unfiltered"}]
    response = federated(shelves, queries, distinct="author")
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["code"] == "invalid_search_distinct"
    assert error["message"] == (
        "Inside `.queries[1]`: Index `unfiltered`: Attribute `author` is not filterable and thus, cannot be"
        " used as distinct attribute. This index does not have configured filterable attributes."
    )
