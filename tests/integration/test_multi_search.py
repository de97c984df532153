"""``POST /multi-search`` (search.md §2) on a real cluster: separate results, federation, errors.

Assertions are written from the contract and compare with single-index searches, so they hold whatever
the ranking engine scores: a federated list must follow ``_rankingScore * weight`` (ties: lower query
position first), whatever those scores are.
"""

from __future__ import annotations

import json
import math
from typing import Any

import httpx
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import REPO_ROOT, RunningCluster

DATASETS = REPO_ROOT.parent / "shared" / "datasets"
MOVIES = json.loads((DATASETS / "movies-1688" / "movies.json").read_bytes())
BOOKS = json.loads((DATASETS / "sdk-fixtures" / "docs-books.json").read_bytes())
VOLATILE = ("processingTimeMs", "requestUid")


def multi(cluster: RunningCluster, body: Any) -> httpx.Response:
    return httpx.post(f"{cluster.url}/multi-search", json=body, timeout=30)


def multi_ok(cluster: RunningCluster, body: Any) -> dict[str, Any]:
    response = multi(cluster, body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def single(cluster: RunningCluster, index: str, **params: Any) -> dict[str, Any]:
    response = httpx.post(f"{cluster.url}/indexes/{index}/search", json=params, timeout=30)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def stable(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key not in VOLATILE}


def identities(hits: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(hit["_federation"]["indexUid"], hit["id"]) for hit in hits]


@pytest.fixture(scope="module")
def indexes(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    for uid, docs in (("movies", MOVIES), ("books", BOOKS), ("capped", BOOKS)):
        task = wait_task(cluster, client.index(uid).add_documents(docs, primary_key="id").task_uid)
        assert task["status"] == "succeeded", task
    task = wait_task(cluster, client.index("capped").update_pagination_settings({"maxTotalHits": 2}).task_uid)
    assert task["status"] == "succeeded", task


# -- non-federated -----------------------------------------------------------------------------------


@pytest.mark.usefixtures("indexes")
def test_results_come_in_query_order_each_with_its_own_pagination(cluster: RunningCluster) -> None:
    queries: list[dict[str, Any]] = [
        {"indexUid": "books", "q": "the", "limit": 3},
        {"indexUid": "movies", "q": "war", "offset": 2, "limit": 4},
        {"indexUid": "movies", "q": "love", "page": 2, "hitsPerPage": 5},
        {"indexUid": "books", "offset": None, "limit": None},
    ]
    results = multi_ok(cluster, {"queries": queries})["results"]
    assert [result["indexUid"] for result in results] == ["books", "movies", "movies", "books"]
    for query, result in zip(queries, results, strict=True):
        assert next(iter(result)) == "indexUid"
        params = {k: v for k, v in query.items() if k != "indexUid" and v is not None}
        expected = single(cluster, query["indexUid"], **params)
        assert stable(result) == {"indexUid": query["indexUid"], **stable(expected)}
    assert (results[1]["offset"], results[1]["limit"]) == (2, 4)
    assert (results[2]["page"], results[2]["hitsPerPage"]) == (2, 5)


@pytest.mark.usefixtures("indexes")
def test_each_query_counts_every_candidate_past_max_total_hits(cluster: RunningCluster) -> None:
    queries = [{"indexUid": "capped"}, {"indexUid": "capped", "page": 1, "hitsPerPage": 1}]
    first, second = multi_ok(cluster, {"queries": queries})["results"]
    # §1.5 as the reference answers: the hits stop at maxTotalHits (2), the counts do not.
    assert (len(first["hits"]), first["estimatedTotalHits"]) == (2, len(BOOKS))
    assert (second["totalHits"], second["totalPages"]) == (len(BOOKS), len(BOOKS))


# -- federated ---------------------------------------------------------------------------------------


def assert_weighted_order(hits: list[dict[str, Any]]) -> None:
    keys = [
        (-hit["_federation"]["weightedRankingScore"], hit["_federation"]["queriesPosition"]) for hit in hits
    ]
    assert keys == sorted(keys)


@pytest.mark.usefixtures("indexes")
def test_federated_hits_carry_federation_and_follow_weighted_scores(cluster: RunningCluster) -> None:
    queries = [
        {"indexUid": "movies", "q": "war", "showRankingScore": True},
        {"indexUid": "books", "q": "the", "showRankingScore": True, "federationOptions": {"weight": 2.5}},
    ]
    body = multi_ok(cluster, {"queries": queries, "federation": {"limit": 60}})
    assert list(body) == ["hits", "processingTimeMs", "limit", "offset", "estimatedTotalHits", "requestUid"]
    assert (body["limit"], body["offset"]) == (60, 0)
    weights = [1.0, 2.5]
    for hit in body["hits"]:
        federation = hit["_federation"]
        assert list(federation) == ["indexUid", "queriesPosition", "weightedRankingScore"]
        position = federation["queriesPosition"]
        assert federation["indexUid"] == queries[position]["indexUid"]
        assert federation["weightedRankingScore"] == pytest.approx(hit["_rankingScore"] * weights[position])
    assert_weighted_order(body["hits"])
    assert {hit["_federation"]["indexUid"] for hit in body["hits"]} == {"movies", "books"}
    plain = multi_ok(cluster, {"queries": [{"indexUid": "books", "q": "the"}], "federation": {}})
    assert plain["hits"] and all("_rankingScore" not in hit for hit in plain["hits"])
    assert all("_federation" in hit for hit in plain["hits"])


@pytest.mark.usefixtures("indexes")
def test_weights_reorder_and_a_zero_weight_query_sinks(cluster: RunningCluster) -> None:
    def federated(movies_weight: float, books_weight: float) -> list[dict[str, Any]]:
        queries = [
            {"indexUid": "movies", "q": "war", "federationOptions": {"weight": movies_weight}},
            {"indexUid": "books", "q": "the", "federationOptions": {"weight": books_weight}},
        ]
        hits: list[dict[str, Any]] = multi_ok(cluster, {"queries": queries, "federation": {"limit": 2000}})[
            "hits"
        ]
        assert_weighted_order(hits)
        return hits

    books_first = [hit["_federation"]["indexUid"] for hit in federated(0.0, 1.0)]
    count = books_first.count("books")
    assert count and books_first == ["books"] * count + ["movies"] * (len(books_first) - count)
    movies_first = federated(1.0, 0.0)
    sunk = [hit for hit in movies_first if hit["_federation"]["indexUid"] == "books"]
    assert sunk and all(hit["_federation"]["weightedRankingScore"] == 0 for hit in sunk)
    assert movies_first[-len(sunk) :] == sunk


@pytest.mark.usefixtures("indexes")
def test_a_document_found_by_two_queries_of_one_index_appears_once(cluster: RunningCluster) -> None:
    queries = [
        {"indexUid": "books", "q": "the", "showRankingScore": True},
        {"indexUid": "books", "showRankingScore": True},
        {"indexUid": "capped", "showRankingScore": True},
    ]
    body = multi_ok(cluster, {"queries": queries, "federation": {"limit": 100}})
    ids = identities(body["hits"])
    assert len(ids) == len(set(ids))
    assert {doc_id for uid, doc_id in ids if uid == "books"} == {book["id"] for book in BOOKS}
    scores = [
        {
            hit["id"]: hit["_rankingScore"]
            for hit in single(cluster, "books", q=query.get("q"), limit=100, showRankingScore=True)["hits"]
        }
        for query in queries[:2]
    ]
    for hit in body["hits"]:
        if hit["_federation"]["indexUid"] != "books":
            continue
        candidates = [(-s[hit["id"]], position) for position, s in enumerate(scores) if hit["id"] in s]
        assert hit["_federation"]["queriesPosition"] == min(candidates)[1], hit
    # Per index, the union of its queries' candidates: every book for both indexes.
    assert body["estimatedTotalHits"] == 2 * len(BOOKS), "candidates are counted before maxTotalHits"
    assert sum(uid == "capped" for uid, _ in ids) == 2, "each query is capped by its index's maxTotalHits"


@pytest.mark.usefixtures("indexes")
def test_an_index_shows_at_most_its_max_total_hits_over_all_its_queries(cluster: RunningCluster) -> None:
    queries = [{"indexUid": "capped", "q": "the"}, {"indexUid": "capped"}, {"indexUid": "books", "q": "the"}]
    body = multi_ok(cluster, {"queries": queries, "federation": {"limit": 100}})
    # As the reference answers: two queries on `capped` (maxTotalHits 2) show 2 of its hits, not 2
    # each; its count is still every candidate (the placeholder query's: every book).
    uids = [uid for uid, _ in identities(body["hits"])]
    assert uids.count("capped") == 2
    the = single(cluster, "books", q="the", limit=100)["estimatedTotalHits"]
    assert uids.count("books") == the
    assert body["estimatedTotalHits"] == len(BOOKS) + the


def matched_ids(cluster: RunningCluster, **params: Any) -> set[int]:
    body = single(cluster, "movies", limit=1000, attributesToRetrieve=["id"], **params)
    assert body["estimatedTotalHits"] < 1000, "the whole candidate set fits in one page"
    return {hit["id"] for hit in body["hits"]}


@pytest.mark.usefixtures("indexes")
def test_total_counts_the_union_of_an_index_queries(cluster: RunningCluster) -> None:
    """A movie two queries match counts once; a query's threshold drops what it drops alone."""
    love, war = matched_ids(cluster, q="love"), matched_ids(cluster, q="war")
    assert love & war and love - war and war - love, "overlapping but different candidate sets"
    queries = [{"indexUid": "movies", "q": "love"}, {"indexUid": "movies", "q": "war"}]
    body = multi_ok(cluster, {"queries": queries, "federation": {"limit": 0}})
    assert body["estimatedTotalHits"] == len(love | war)
    strict_love = matched_ids(cluster, q="love story", rankingScoreThreshold=0.9)
    assert 0 < len(strict_love) < len(matched_ids(cluster, q="love story"))
    queries = [
        {"indexUid": "movies", "q": "love story", "rankingScoreThreshold": 0.9},
        {"indexUid": "movies", "q": "war"},
        {"indexUid": "books", "q": "the"},
    ]
    body = multi_ok(cluster, {"queries": queries, "federation": {"limit": 0}})
    books = single(cluster, "books", q="the")["estimatedTotalHits"]
    assert body["estimatedTotalHits"] == len(strict_love | war) + books


@pytest.mark.usefixtures("indexes")
def test_federation_offset_limit_page_and_totals(cluster: RunningCluster) -> None:
    queries = [{"indexUid": "movies", "q": "love"}, {"indexUid": "books", "q": "the"}]
    full = multi_ok(cluster, {"queries": queries, "federation": {"limit": 100}})
    total = (
        single(cluster, "movies", q="love")["estimatedTotalHits"]
        + single(cluster, "books", q="the")["estimatedTotalHits"]
    )
    assert full["estimatedTotalHits"] == total
    everything = identities(full["hits"])
    window = multi_ok(cluster, {"queries": queries, "federation": {"offset": 2, "limit": 3}})
    assert identities(window["hits"]) == everything[2:5]
    assert (window["offset"], window["limit"], window["estimatedTotalHits"]) == (2, 3, total)
    paged = multi_ok(cluster, {"queries": queries, "federation": {"page": 2, "hitsPerPage": 3}})
    assert list(paged) == [
        "hits",
        "processingTimeMs",
        "hitsPerPage",
        "page",
        "totalPages",
        "totalHits",
        "requestUid",
    ]
    assert identities(paged["hits"]) == everything[3:6]
    assert (paged["page"], paged["hitsPerPage"], paged["totalHits"]) == (2, 3, total)
    assert paged["totalPages"] == math.ceil(total / 3)
    default_page = multi_ok(cluster, {"queries": queries, "federation": {"page": 1}})
    assert default_page["hitsPerPage"] == 20 and identities(default_page["hits"]) == everything[:20]
    nothing = multi_ok(cluster, {"queries": queries, "federation": {"hitsPerPage": 0}})
    assert (nothing["hits"], nothing["totalPages"], nothing["totalHits"]) == ([], 0, total)


@pytest.mark.usefixtures("indexes")
def test_null_options_mean_absent_inside_federated_queries(cluster: RunningCluster) -> None:
    query = {"indexUid": "books", "q": "the", "offset": None, "limit": None, "page": None, "facets": []}
    body = multi_ok(cluster, {"queries": [query], "federation": None})
    assert body["results"][0]["limit"] == 20
    body = multi_ok(cluster, {"queries": [{**query, "federationOptions": None}], "federation": {}})
    assert body["limit"] == 20 and body["hits"]


# -- errors ------------------------------------------------------------------------------------------

PAGINATION_HINT = (
    "Inside `.queries[1]`: Using pagination options is not allowed in federated queries.\n - Hint: remove"
    " `{}` from the query or remove `federation` from the request\n - Hint: pass `federation.limit` and"
    " `federation.offset` for pagination in federated search"
)
BOOKS_QUERY = {"indexUid": "books"}
ERRORS: list[tuple[Any, str, str]] = [
    ({}, "bad_request", "Missing field `queries`"),
    ([], "bad_request", "Invalid value type: expected an object, but found an array: `[]`"),
    (
        {"queries": {}},
        "bad_request",
        "Invalid value type at `.queries`: expected an array, but found an object: `{}`",
    ),
    (
        {"queries": [], "federation": 3},
        "bad_request",
        "Invalid value type at `.federation`: expected an object, but found a positive integer: `3`",
    ),
    ({"queries": [{"q": "x"}]}, "missing_index_uid", "Missing field `indexUid` inside `.queries[0]`"),
    (
        {"queries": [BOOKS_QUERY, {"indexUid": "bad uid!"}]},
        "invalid_index_uid",
        "Invalid value at `.queries[1].indexUid`: `bad uid!` is not a valid index uid. Index uid can be an"
        " integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and"
        " can not be more than 512 bytes.",
    ),
    (
        {"queries": [{"indexUid": 7}]},
        "invalid_index_uid",
        "Invalid value type at `.queries[0].indexUid`: expected a string, but found a positive integer: `7`",
    ),
    (
        {"queries": [{"indexUid": "books", "limit": "ten"}]},
        "invalid_search_limit",
        'Invalid value type at `.queries[0].limit`: expected a positive integer, but found a string: `"ten"`',
    ),
    (
        {"queries": [{"indexUid": "books", "qq": 1}]},
        "bad_request",
        "Unknown field `qq` inside `.queries[0]`: expected one of `indexUid`, `q`…",
    ),
    (
        {"queries": [BOOKS_QUERY, {"indexUid": "nope"}, {"indexUid": "nope2"}]},
        "index_not_found",
        "Inside `.queries[1]`: Index `nope` not found.",
    ),
    (
        {"queries": [BOOKS_QUERY, {"indexUid": "nope"}], "federation": {}},
        "index_not_found",
        "Inside `.queries[1]`: Index `nope` not found.",
    ),
    (
        {"queries": [BOOKS_QUERY, {"indexUid": "books", "federationOptions": {"weight": 2}}]},
        "invalid_multi_search_federation_options",
        "Inside `.queries[1]`: Using `federationOptions` is not allowed in a non-federated search.\n - Hint:"
        " remove `federationOptions` from the query or add `federation` to the request.",
    ),
    (
        {"queries": [{"indexUid": "books", "federationOptions": {"weight": -0.5}}], "federation": {}},
        "invalid_multi_search_weight",
        "Invalid value at `.queries[0].federationOptions.weight`: the value of `weight` is invalid, expected"
        " a positive float (>= 0.0).",
    ),
    (
        {"queries": [{"indexUid": "books", "federationOptions": {"weight": "x"}}], "federation": {}},
        "invalid_multi_search_weight",
        "Invalid value type at `.queries[0].federationOptions.weight`: expected a number, but found a"
        ' string: `"x"`',
    ),
    (
        {"queries": [{"indexUid": "books", "federationOptions": {"wait": 1}}], "federation": {}},
        "invalid_multi_search_federation_options",
        "Unknown field `wait` inside `.queries[0].federationOptions`: expected one of `weight`, `remote`,"
        " `queryPosition`",
    ),
    *[
        (
            {"queries": [BOOKS_QUERY, {"indexUid": "books", name: 1}], "federation": {}},
            "invalid_multi_search_query_pagination",
            PAGINATION_HINT.format(name),
        )
        for name in ("offset", "limit", "page", "hitsPerPage")
    ],
    (
        {"queries": [BOOKS_QUERY, {"indexUid": "books", "facets": ["genres"]}], "federation": {}},
        "invalid_multi_search_query_facets",
        "Inside `.queries[1]`: Using facet options is not allowed in federated queries.\n - Hint: remove"
        " `facets` from the query or remove `federation` from the request\n - Hint: pass"
        " `federation.facetsByIndex` for facets in federated search",
    ),
    (
        {"queries": [{"indexUid": "books", "personalize": {"userContext": "x"}}], "federation": {}},
        "invalid_multi_search_query_personalization",
        "Inside `.queries[0]`: Using `personalize` is not allowed in federated queries.…",
    ),
    (
        {"queries": [{"indexUid": "books", "showPerformanceDetails": True}], "federation": {}},
        "invalid_multi_search_query_show_performance_details",
        "Inside `.queries[0]`: Using `showPerformanceDetails` is not allowed in federated queries.…",
    ),
    (
        {"queries": [{"indexUid": "books", "distinct": "genres"}], "federation": {"distinct": "genres"}},
        "invalid_multi_search_distinct",
        "Inside `.queries[0]`: Using `distinct` in a federated query is not allowed when"
        " `federation.distinct` is set.…",
    ),
    (
        {"queries": [{"indexUid": "books", "federationOptions": {"remote": "far"}}], "federation": {}},
        "invalid_multi_search_remote",
        "Inside `.queries[0]`: Invalid `federationOptions.remote`: remote `far` is not registered…",
    ),
    (
        {"queries": [BOOKS_QUERY], "federation": {"limit": -1}},
        "invalid_search_limit",
        "Invalid value type at `.federation.limit`: expected a positive integer, but found a negative"
        " integer: `-1`",
    ),
    (
        {"queries": [BOOKS_QUERY], "federation": {"hitsPerPage": "3"}},
        "invalid_search_hits_per_page",
        "Invalid value type at `.federation.hitsPerPage`: expected a positive integer, but found a"
        ' string: `"3"`',
    ),
    (
        {"queries": [BOOKS_QUERY], "federation": {"lmit": 3}},
        "bad_request",
        "Unknown field `lmit` inside `.federation`: did you mean `limit`? expected one of `limit`, `offset`,"
        " `page`, `hitsPerPage`, `facetsByIndex`, `mergeFacets`, `distinct`, `showPerformanceDetails`,"
        " `personalize`",
    ),
    (
        {"queries": [BOOKS_QUERY], "federation": {"facetsByIndex": {"books": "genres"}}},
        "invalid_multi_search_facets_by_index",
        "Invalid value type at `.federation.facetsByIndex.books`: expected an array, but found a"
        ' string: `"genres"`',
    ),
    (
        {"queries": [BOOKS_QUERY], "federation": {"mergeFacets": {"maxValuesPerFacet": -1}}},
        "invalid_multi_search_max_values_per_facet",
        "Invalid value type at `.federation.mergeFacets.maxValuesPerFacet`: expected a positive integer, but"
        " found a negative integer: `-1`",
    ),
]


@pytest.mark.usefixtures("indexes")
@pytest.mark.parametrize(
    ("body", "code", "message"), ERRORS, ids=[f"{i}-{e[1]}" for i, e in enumerate(ERRORS)]
)
def test_errors(cluster: RunningCluster, body: Any, code: str, message: str) -> None:
    response = multi(cluster, body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert (error["code"], error["type"]) == (code, "invalid_request")
    assert error["link"] == f"https://docs.meilisearch.com/errors#{code}"
    if message.endswith("…"):
        assert error["message"].startswith(message[:-1]), error["message"]
    else:
        assert error["message"] == message


def test_request_level_errors(cluster: RunningCluster) -> None:
    missing = httpx.post(f"{cluster.url}/multi-search", content=b'{"queries": []}')
    assert (missing.status_code, missing.json()["code"]) == (415, "missing_content_type")
    malformed = httpx.post(
        f"{cluster.url}/multi-search", content=b'{"queries": [', headers={"content-type": "application/json"}
    )
    assert (malformed.status_code, malformed.json()["code"]) == (400, "malformed_payload")
    assert httpx.get(f"{cluster.url}/multi-search").status_code == 405
    assert multi_ok(cluster, {"queries": []}) == {"results": []}


# -- official client ---------------------------------------------------------------------------------


@pytest.mark.usefixtures("indexes")
def test_official_client_multi_search(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    separate = client.multi_search(
        [{"indexUid": "books", "q": "the"}, {"indexUid": "movies", "q": "war", "limit": 2}]
    )
    assert [result["indexUid"] for result in separate["results"]] == ["books", "movies"]
    assert len(separate["results"][1]["hits"]) == 2
    federated: dict[str, Any] = client.multi_search(
        [
            {"indexUid": "books", "q": "the"},
            {"indexUid": "movies", "q": "war", "federationOptions": {"weight": 0.5}},
        ],
        federation={"limit": 5},
    )
    assert len(federated["hits"]) == 5 and federated["limit"] == 5
    assert all(hit["_federation"]["indexUid"] in ("books", "movies") for hit in federated["hits"])
