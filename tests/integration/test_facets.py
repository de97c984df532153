"""Facet distributions and stats (search.md §1.7, §6.10) on 1 and 3 shards, against counts computed here.

Every expectation is computed in the test from the documents: counts per normalised value within
the candidates, the spelling of the first candidate document in insertion order, the number block
before the strings, ``maxValuesPerFacet`` and ``sortFacetValuesBy``. Both clusters must answer the same.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.facet_support import expected_facets, expected_hits
from tests.integration.search_support import (
    assert_error,
    make_index,
    one_and_three_shards,
    search,
    search_raw,
    update_settings,
)
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

GENRES = ["Drama", "drama", " DRAMA", "Comedy", "comedy", "Sci-Fi", "Ação", "acao", "Zebra", "éclair"]
WORDS = ["red", "blue", "green", "apple", "amber"]


def _docs(count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for i in range(count):
        doc: dict[str, Any] = {"id": i, "text": " ".join(rng.sample(WORDS, 2))}
        if rng.random() < 0.9:
            doc["genre"] = rng.choice(GENRES) if rng.random() < 0.7 else rng.sample(GENRES, 2)
        if rng.random() < 0.8:
            doc["year"] = rng.choice([1990, 1995, 2000, 2005.5, 9, 10, -3])
        if rng.random() < 0.5:
            doc["info"] = {"rating": rng.randint(1, 5), "tag": rng.choice(["New", "new", "old"])}
        doc["flag"] = rng.random() < 0.5
        docs.append(doc)
    return docs


DOCS = _docs(300, 7)
SETTINGS = {"filterableAttributes": ["genre", "year", "info", "flag"]}


def strip(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key not in ("processingTimeMs", "requestUid")}


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with one_and_three_shards("facets", DOCS, SETTINGS) as pair:
        yield pair


def both(clusters: tuple[RunningCluster, RunningCluster], **params: Any) -> dict[str, Any]:
    """The answer of both clusters, which must be identical."""
    one, three = clusters
    first, second = search(one, "facets", **params), search(three, "facets", **params)
    assert strip(first) == strip(second)
    return first


def candidates_of(**where: Any) -> list[dict[str, Any]]:
    return [doc for doc in DOCS if all(check(doc) for check in where.values())]


def test_distribution_and_stats_over_all_documents(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    body = both(clusters, facets=["genre", "year", "info", "flag"], limit=0)
    distribution, stats = body["facetDistribution"], body["facetStats"]
    named = ["flag", "genre", "info.rating", "info.tag", "year"]
    # `info` itself holds objects only: it may be listed, with no values.
    assert [field for field in distribution if distribution[field]] == named
    for field in named:
        shown, field_stats = expected_facets(DOCS, field)
        assert list(distribution[field].items()) == list(shown.items()), field
        if field_stats is None:
            assert field not in stats
        else:
            assert stats[field] == field_stats
    # ≤ 3000 candidates: numbers in the order of their decimal strings (§1.7).
    assert list(distribution["year"])[:3] == ["-3", "10", "1990"]


def test_distribution_counts_only_the_candidates(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    body = both(clusters, q="apple", facets=["*"], limit=0)
    matching = candidates_of(q=lambda doc: "apple" in doc["text"].split())
    assert body["estimatedTotalHits"] == len(matching)
    for field in ("genre", "year", "info.tag"):
        assert body["facetDistribution"][field] == expected_facets(matching, field)[0]
    body = both(clusters, filter="year >= 1995", facets=["genre", "year"], limit=0)
    filtered = [doc for doc in DOCS if isinstance(doc.get("year"), int | float) and doc["year"] >= 1995]
    assert list(body["facetDistribution"]["genre"].items()) == list(
        expected_facets(filtered, "genre")[0].items()
    )
    assert body["facetStats"]["year"] == expected_facets(filtered, "year")[1]


def test_first_spelling_in_insertion_order_among_candidates(
    clusters: tuple[RunningCluster, RunningCluster],
) -> None:
    for running in clusters:
        docs = [
            {"id": "a", "c": "Blue", "n": 1},
            {"id": "b", "c": "  blue", "n": 2},
            {"id": "c", "c": "RED", "n": 2},
        ]
        make_index(running, "spellings", docs, {"filterableAttributes": ["c", "n"]})
        body = search(running, "spellings", facets=["c"])
        assert body["facetDistribution"] == {"c": {"Blue": 2, "RED": 1}}
        body = search(running, "spellings", facets=["c"], filter="n = 2")
        assert body["facetDistribution"] == {"c": {"  blue": 1, "RED": 1}}
        # The first document goes: the next one's spelling shows.
        index = client_for(running).index("spellings")
        wait_task(running, index.delete_document("a").task_uid)
        wait_task(running, index.add_documents([{"id": "d", "c": "BLUE"}]).task_uid)
        assert search(running, "spellings", facets=["c"])["facetDistribution"] == {
            "c": {"  blue": 2, "RED": 1}
        }


def test_max_values_and_sort_by_count(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    one, three = clusters
    for running in clusters:
        update_settings(
            running,
            "facets",
            {"faceting": {"maxValuesPerFacet": 4, "sortFacetValuesBy": {"genre": "count", "*": "alpha"}}},
        )
    try:
        body = both(clusters, facets=["genre", "year", "info.tag"], limit=0)
        assert body["facetDistribution"]["genre"] == expected_facets(DOCS, "genre", 4, "count")[0]
        assert list(body["facetDistribution"]["year"]) == list(expected_facets(DOCS, "year", 4)[0])
        assert len(body["facetDistribution"]["year"]) == 4
        # Stats are not cut by maxValuesPerFacet.
        assert body["facetStats"]["year"] == expected_facets(DOCS, "year")[1]
        # sorted by count, descending
        counts = list(body["facetDistribution"]["genre"].values())
        assert counts == sorted(counts, reverse=True)
    finally:
        for running in (one, three):
            update_settings(running, "facets", {"faceting": None})


def test_count_order_is_exact_across_shards(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    """A value can lead the merged counts without leading any one shard: every count must arrive."""
    docs = []
    for i in range(60):
        # "common" spread over all shards, the "rare-k" values concentrated in few documents each
        docs.append({"id": i, "v": "common" if i % 3 == 0 else f"rare-{i % 7}"})
    for running in clusters:
        make_index(
            running,
            "counted",
            docs,
            {
                "filterableAttributes": ["v"],
                "faceting": {"maxValuesPerFacet": 2, "sortFacetValuesBy": {"*": "count"}},
            },
        )
    one, three = clusters
    expected = expected_facets(docs, "v", 2, "count")[0]
    assert search(one, "counted", facets=["v"])["facetDistribution"]["v"] == expected
    assert search(three, "counted", facets=["v"])["facetDistribution"]["v"] == expected


def test_get_facets_and_empty_list(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    one, _ = clusters
    response = httpx.get(f"{one.url}/indexes/facets/search", params={"facets": "genre,flag", "limit": "0"})
    assert response.status_code == 200
    assert set(response.json()["facetDistribution"]) == {"genre", "flag"}
    body = search(one, "facets", facets=[])
    assert body["facetDistribution"] == {} and body["facetStats"] == {}
    assert "facetDistribution" not in search(one, "facets")


def test_facet_errors(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    one, _ = clusters
    assert_error(
        search_raw(one, "facets", facets=["doggo"]),
        "invalid_search_facets",
        "Invalid facet distribution: Pattern `doggo` is not filterable. Available filterable attributes"
        " patterns are: `flag, genre, info, year`.",
    )
    make_index(one, "bare", [{"id": 1, "a": "x"}])
    assert_error(
        search_raw(one, "bare", facets=["a"]),
        "invalid_search_facets",
        "Invalid facet distribution: Pattern `a` is not filterable. This index does not have configured"
        " filterable attributes.",
    )
    rules = [{"attributePatterns": ["a"], "features": {"facetSearch": True, "filter": {"equality": False}}}]
    make_index(one, "nofilter", [{"id": 1, "a": "x"}], {"filterableAttributes": rules})
    # `*` names every filterable field: with none, it is refused like a named one (the reference's answer).
    for index in ("bare", "nofilter"):
        assert_error(
            search_raw(one, index, facets=["*"]),
            "invalid_search_facets",
            "Invalid facet distribution: Pattern `*` is not filterable. This index does not have configured"
            " filterable attributes.",
        )
    assert_error(
        search_raw(one, "nofilter", facets=["a"]),
        "invalid_search_facets",
        "Invalid facet distribution: Attribute `a` matched rule #0 in filterableAttributes, but this rule"
        " does not enable filtering.\nHint: enable filtering in rule #0 by modifying the features.filter"
        " object\nHint: prepend another rule matching `a` with appropriate filter features before rule #0",
    )
    assert_error(
        search_raw(one, "facets", facets="genre"), "invalid_search_facets", prefix="Invalid value type"
    )


def facet_search(running: RunningCluster, uid: str, **body: Any) -> httpx.Response:
    return httpx.post(f"{running.url}/indexes/{uid}/facet-search", json=body, timeout=30)


def test_facet_search(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    cases: list[tuple[dict[str, Any], list[dict[str, Any]], Any]] = [
        ({}, DOCS, lambda value: True),
        ({"facetQuery": "dra"}, DOCS, lambda value: value.startswith("dra")),
        # 5 bytes: one typo allowed, as a prefix of the whole value (§3.1)
        ({"facetQuery": "comdy"}, DOCS, lambda value: value == "comedy"),
        ({"facetQuery": "fi"}, DOCS, lambda value: value.startswith("fi")),  # "sci-fi" does not start so
        # "Ação" and "acao" both: diacritics are folded as the analyser folds searchable words
        ({"facetQuery": "ACA"}, DOCS, lambda value: value.startswith("aca")),
        ({"facetQuery": "ecl"}, DOCS, lambda value: value.startswith("ecl")),
        (
            {"facetQuery": "d", "q": "green"},
            [doc for doc in DOCS if "green" in doc["text"].split()],
            lambda value: value.startswith("d"),
        ),
        (
            {"facetQuery": "z", "filter": "year = 1990"},
            [doc for doc in DOCS if doc.get("year") == 1990],
            lambda value: value.startswith("z"),
        ),
    ]
    for body, docs, keep in cases:
        answers = [facet_search(running, "facets", facetName="genre", **body) for running in clusters]
        for response in answers:
            assert response.status_code == 200, response.text
            assert response.json()["facetHits"] == expected_hits(docs, "genre", keep), body
            assert response.json()["facetQuery"] == body.get("facetQuery")
    # unknown fields are ignored
    assert facet_search(clusters[0], "facets", facetName="genre", limit=3, doggo=1).status_code == 200


def test_facet_search_errors(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    one, _ = clusters
    assert_error(facet_search(one, "facets"), "missing_facet_search_facet_name")
    assert_error(facet_search(one, "facets", facetName=3), "invalid_facet_search_facet_name")
    assert_error(facet_search(one, "facets", facetName="genre", facetQuery=1), "invalid_facet_search_query")
    assert_error(
        facet_search(one, "facets", facetName="genre", exhaustiveFacetCount="x"),
        "invalid_facet_search_exhaustive_facet_count",
    )
    assert_error(
        facet_search(one, "facets", facetName="text"),
        "invalid_facet_search_facet_name",
        "Attribute `text` is not facet-searchable. Available facet-searchable attributes patterns are:"
        " `flag, genre, info, year`. To make it facet-searchable add it to the `filterableAttributes` index"
        " settings.",
    )
    rules = [{"attributePatterns": ["a"]}]
    make_index(one, "nosearch", [{"id": 1, "a": "x"}], {"filterableAttributes": rules})
    assert_error(
        facet_search(one, "nosearch", facetName="a"),
        "invalid_facet_search_facet_name",
        "Attribute `a` is not facet-searchable. Note: this attribute matches rule #0 in filterableAttributes,"
        " but this rule does not enable facetSearch.\nHint: enable facetSearch in rule #0 by adding"
        ' `"facetSearch": true` to the rule.\nHint: prepend another rule matching a with facetSearch: true'
        " before rule #0",
    )
    make_index(one, "disabled", [{"id": 1, "a": "x"}], {"filterableAttributes": ["a"], "facetSearch": False})
    assert_error(
        facet_search(one, "disabled", facetName="a"),
        "facet_search_disabled",
        "The facet search is disabled for this index",
    )
    assert_error(facet_search(one, "missing", facetName="a"), "index_not_found", status=404)


def multi(running: RunningCluster, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{running.url}/multi-search", json=body, timeout=30)


def test_multi_search_facets(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    for running in clusters:
        make_index(running, "facets2", DOCS[:100], SETTINGS)
    genre_all, _ = expected_facets(DOCS, "genre")
    genre_100, _ = expected_facets(DOCS[:100], "genre")
    year_100, year_stats = expected_facets(DOCS[:100], "year")
    for running in clusters:
        queries = [{"indexUid": "facets", "facets": ["genre"]}, {"indexUid": "facets2", "facets": ["year"]}]
        results = multi(running, {"queries": queries}).json()["results"]
        assert results[0]["facetDistribution"] == {"genre": genre_all}
        assert results[1]["facetDistribution"] == {"year": year_100}
        assert results[1]["facetStats"] == {"year": year_stats}
        federation: dict[str, Any] = {"facetsByIndex": {"facets": ["genre"], "facets2": ["genre", "year"]}}
        queries = [{"indexUid": "facets"}, {"indexUid": "facets2"}]
        body = multi(running, {"queries": queries, "federation": federation}).json()
        assert body["facetsByIndex"]["facets"] == {"distribution": {"genre": genre_all}, "stats": {}}
        assert body["facetsByIndex"]["facets2"]["distribution"] == {"genre": genre_100, "year": year_100}
        assert "facetDistribution" not in body
        merged = multi(running, {"queries": queries, "federation": {**federation, "mergeFacets": {}}}).json()
        assert merged["facetDistribution"]["genre"] == {
            spelling: count + genre_100.get(spelling, 0) for spelling, count in genre_all.items()
        }
        assert merged["facetStats"] == {"year": expected_facets(DOCS, "year")[1]}
        assert "facetsByIndex" not in merged
        capped = {**federation, "mergeFacets": {"maxValuesPerFacet": 2}}
        merged = multi(running, {"queries": queries, "federation": capped}).json()
        assert len(merged["facetDistribution"]["genre"]) == 2


def test_multi_search_facet_errors(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    one, _ = clusters
    queries = [{"indexUid": "facets"}]
    assert_error(
        multi(one, {"queries": queries, "federation": {"facetsByIndex": {"facets": ["text"]}}}),
        "invalid_multi_search_facets",
        prefix="Inside `.federation.facetsByIndex.facets`: Invalid facet distribution: Pattern `text`",
    )
    assert_error(
        multi(one, {"queries": queries, "federation": {"facetsByIndex": {"nowhere": ["a"]}}}),
        "index_not_found",
        "Inside `.federation.facetsByIndex.nowhere`: Index `nowhere` not found.\n - Note: index `nowhere` is"
        " not used in queries",
    )
    assert_error(
        multi(one, {"queries": [{"indexUid": "facets", "facets": ["x"]}]}),
        "invalid_search_facets",
        prefix="Inside `.queries[0]`: Invalid facet distribution",
    )
    update_settings(one, "facets2", {"faceting": {"sortFacetValuesBy": {"genre": "count"}}})
    federation = {"facetsByIndex": {"facets": ["genre"], "facets2": ["genre"]}, "mergeFacets": {}}
    assert_error(
        multi(one, {"queries": [{"indexUid": "facets"}, {"indexUid": "facets2"}], "federation": federation}),
        "invalid_multi_search_facet_order",
        "Inconsistent order for values in facet `genre`: index `facets` orders alphabetically, but index"
        " `facets2` orders by count.\n - Hint: Remove `federation.mergeFacets` or change"
        " `faceting.sortFacetValuesBy` to be consistent in settings.",
    )
