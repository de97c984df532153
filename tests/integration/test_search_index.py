"""Documents become searchable when their task succeeds, on a real cluster.

These tests check which documents match (sets, not rankings): ``found_ids`` asks for documents having
every query word itself, i.e. the typo-free bucket of an all-words query without prefix matching.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import REPO_ROOT, RunningCluster

MOVIES = json.loads((REPO_ROOT.parent / "shared" / "datasets" / "movies-1688" / "movies.json").read_bytes())
_WORD = re.compile(r"[a-z0-9]+")


def search(cluster: RunningCluster, index: str, **params: Any) -> dict[str, Any]:
    response = httpx.post(f"{cluster.url}/indexes/{index}/search", json=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def found_ids(cluster: RunningCluster, index: str, q: str) -> set[Any]:
    """Documents containing every word of ``q``: typo variants and stems rank at typo count >= 1, and
    a trailing space turns prefix matching off."""
    body = search(cluster, index, q=q + " ", limit=5000, matchingStrategy="all", showRankingScoreDetails=True)
    assert body["estimatedTotalHits"] == len(body["hits"])
    return {
        hit["id"]
        for hit in body["hits"]
        if hit["_rankingScoreDetails"].get("typo", {}).get("typoCount", 0) == 0
    }


def ascii_words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) if text.isascii() else set()


@pytest.fixture(scope="module")
def movies(cluster: RunningCluster) -> str:
    client = client_for(cluster)
    task = wait_task(cluster, client.index("movies").add_documents(MOVIES, primary_key="id").task_uid)
    assert task["status"] == "succeeded", task
    wait_task(cluster, client.index("movies").update_pagination_settings({"maxTotalHits": 5000}).task_uid)
    return "movies"


def test_every_sampled_document_is_found_by_each_of_its_title_words(
    cluster: RunningCluster, movies: str
) -> None:
    rng = random.Random(4)
    for movie in rng.sample(MOVIES, 25):
        for word in sorted(ascii_words(movie["title"])):
            assert movie["id"] in found_ids(cluster, movies, word), (word, movie["title"])


def all_text(value: Any) -> str:
    """Every string and number of a document, as the default ``["*"]`` searchable attributes see it."""
    if isinstance(value, dict):
        return " ".join(all_text(item) for item in value.values())
    if isinstance(value, list):
        return " ".join(all_text(item) for item in value)
    return "" if isinstance(value, bool) or value is None else str(value)


def test_all_words_must_match_in_any_order(cluster: RunningCluster, movies: str) -> None:
    texts = {m["id"]: all_text(m) for m in MOVIES}
    for query in ("war love", "love war", "space alien", "the dark knight"):
        words = query.split()
        expected = {
            mid for mid, text in texts.items() if all(w in _WORD.findall(text.lower()) for w in words)
        }
        assert found_ids(cluster, movies, query) == expected, query
    assert found_ids(cluster, movies, "zzzqqqxxx") == set()


def test_case_and_diacritics_do_not_matter(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    docs = [{"id": 1, "title": "Le Café de l'Élève"}, {"id": 2, "title": "CAFE SOCIETY"}]
    wait_task(cluster, client.index("folding").add_documents(docs).task_uid)
    assert found_ids(cluster, "folding", "cafe") == {1, 2}
    assert found_ids(cluster, "folding", "ÉLÈVE") == {1}
    assert found_ids(cluster, "folding", "café society") == {2}


def test_placeholder_search_and_pagination(cluster: RunningCluster, movies: str) -> None:
    everything = search(cluster, movies, limit=2000)
    assert everything["estimatedTotalHits"] == len(MOVIES)
    ids = [hit["id"] for hit in everything["hits"]]
    assert len(set(ids)) == len(MOVIES)
    page = search(cluster, movies, offset=30, limit=10)
    assert [hit["id"] for hit in page["hits"]] == ids[30:40]
    assert (page["offset"], page["limit"]) == (30, 10)
    paged = search(cluster, movies, page=4, hitsPerPage=10)
    assert [hit["id"] for hit in paged["hits"]] == ids[30:40]
    assert (paged["totalHits"], paged["totalPages"]) == (len(MOVIES), (len(MOVIES) + 9) // 10)
    got = httpx.get(f"{cluster.url}/indexes/{movies}/search", params={"q": "war", "limit": 3}).json()
    assert len(got["hits"]) == 3 and got["query"] == "war"


def test_updates_and_deletions_are_reflected(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    index = client.index("changing")
    docs = [{"id": i, "title": f"alpha{i} common", "body": "first version"} for i in range(40)]
    wait_task(cluster, index.add_documents(docs).task_uid)
    assert found_ids(cluster, "changing", "common") == set(range(40))
    wait_task(cluster, index.add_documents([{"id": 3, "title": "replaced"}]).task_uid)
    assert 3 not in found_ids(cluster, "changing", "common")
    assert found_ids(cluster, "changing", "replaced") == {3}
    assert found_ids(cluster, "changing", "version") == set(range(40)) - {3}
    wait_task(cluster, index.update_documents([{"id": 4, "body": "second edition"}]).task_uid)
    assert found_ids(cluster, "changing", "alpha4 edition") == {4}
    assert 4 not in found_ids(cluster, "changing", "first")
    wait_task(cluster, index.delete_documents([5, 6]).task_uid)
    assert found_ids(cluster, "changing", "common") == set(range(40)) - {3, 5, 6}
    assert found_ids(cluster, "changing", "alpha5") == set()
    wait_task(cluster, index.delete_all_documents().task_uid)
    assert search(cluster, "changing", q="common")["estimatedTotalHits"] == 0
    wait_task(cluster, index.add_documents([{"id": 9, "title": "common again"}]).task_uid)
    assert found_ids(cluster, "changing", "common") == {9}


def test_nested_fields_arrays_and_numbers_are_searchable(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    docs = [
        {"id": "a", "cast": [{"name": "Keanu Reeves"}, {"name": "Carrie-Anne Moss"}], "year": 1999},
        {"id": "b", "tags": ["space", "opera"], "rating": 8.5, "flag": True},
    ]
    wait_task(cluster, client.index("shapes").add_documents(docs).task_uid)
    assert found_ids(cluster, "shapes", "keanu moss") == {"a"}
    assert found_ids(cluster, "shapes", "1999") == {"a"}
    assert found_ids(cluster, "shapes", "opera space") == {"b"}
    assert found_ids(cluster, "shapes", "8.5") == {"b"}
    assert found_ids(cluster, "shapes", "true") == set(), "booleans are not searchable text"


def test_searchable_attributes_change_reindexes(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    index = client.index("narrowed")
    docs = [{"id": 1, "title": "red apple", "note": "green"}, {"id": 2, "title": "green pear", "note": "red"}]
    wait_task(cluster, index.add_documents(docs).task_uid)
    assert found_ids(cluster, "narrowed", "red") == {1, 2}
    task = wait_task(cluster, index.update_searchable_attributes(["title"]).task_uid)
    assert task["status"] == "succeeded", task
    assert found_ids(cluster, "narrowed", "red") == {1}
    assert found_ids(cluster, "narrowed", "green") == {2}
    wait_task(cluster, index.add_documents([{"id": 3, "title": "plain", "note": "red"}]).task_uid)
    assert found_ids(cluster, "narrowed", "red") == {1}, "new documents follow the settings too"
    wait_task(cluster, index.reset_searchable_attributes().task_uid)
    assert found_ids(cluster, "narrowed", "red") == {1, 2, 3}


def test_stop_words_are_not_indexed_and_dropped_from_queries(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    index = client.index("stopping")
    wait_task(cluster, index.add_documents([{"id": 1, "t": "the cat"}, {"id": 2, "t": "a dog"}]).task_uid)
    assert found_ids(cluster, "stopping", "the") == {1}
    wait_task(cluster, index.update_stop_words(["the", "a"]).task_uid)
    assert found_ids(cluster, "stopping", "the cat") == {1}
    assert found_ids(cluster, "stopping", "a dog") == {2}


def test_separator_and_dictionary_settings_change_tokens(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    index = client.index("tokens")
    docs = [{"id": 1, "t": "C++ and C#"}, {"id": 2, "t": "foo|bar"}, {"id": 3, "t": "@mention here"}]
    wait_task(cluster, index.add_documents(docs).task_uid)
    assert found_ids(cluster, "tokens", "foo") == {2}, "| is a default separator"
    assert found_ids(cluster, "tokens", "c") == {1}
    wait_task(cluster, index.update_dictionary(["C++", "C#"]).task_uid)
    assert found_ids(cluster, "tokens", "c++") == {1}
    wait_task(cluster, index.update_non_separator_tokens(["@"]).task_uid)
    assert found_ids(cluster, "tokens", "@mention") == {3}
    assert found_ids(cluster, "tokens", "mention") == set()
    wait_task(cluster, index.update_separator_tokens(["oo"]).task_uid)
    assert found_ids(cluster, "tokens", "f") == {2}


def test_missing_index_and_bad_parameters(cluster: RunningCluster) -> None:
    response = httpx.post(f"{cluster.url}/indexes/nope/search", json={"q": "x"})
    assert response.status_code == 404
    assert response.json()["code"] == "index_not_found"
    wait_task(cluster, client_for(cluster).create_index("empty-one").task_uid)
    assert search(cluster, "empty-one", q="x")["hits"] == []
    bad = httpx.post(f"{cluster.url}/indexes/empty-one/search", json={"limit": "ten"})
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid_search_limit"
    unknown = httpx.post(f"{cluster.url}/indexes/empty-one/search", json={"qq": "x"})
    assert unknown.json()["code"] == "bad_request"
    query_error = httpx.get(f"{cluster.url}/indexes/empty-one/search", params={"offset": "x"})
    assert query_error.json()["code"] == "invalid_search_offset"


@pytest.fixture(scope="module")
def sharded() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with RunningCluster(shards=1) as one, RunningCluster(shards=3) as three:
        for running in (one, three):
            client = client_for(running)
            task = wait_task(running, client.index("movies").add_documents(MOVIES, primary_key="id").task_uid)
            assert task["status"] == "succeeded"
            # found_ids needs every candidate on its page: the counts are no longer capped at 1000.
            pagination = client.index("movies").update_pagination_settings({"maxTotalHits": 5000})
            wait_task(running, pagination.task_uid)
        yield one, three


def test_one_and_three_shards_return_the_same_documents(
    sharded: tuple[RunningCluster, RunningCluster],
) -> None:
    one, three = sharded
    rng = random.Random(11)
    vocabulary = sorted({w for m in MOVIES for w in ascii_words(m.get("overview", ""))})
    queries = ["", "love", "the war", "new york", *rng.sample(vocabulary, 20)]
    queries += [" ".join(rng.sample(vocabulary, 2)) for _ in range(5)]
    for query in queries:
        assert found_ids(one, "movies", query) == found_ids(three, "movies", query), query
