"""``sort`` on GET /documents and POST /documents/fetch (core.md §3.3, search.md §5), on 1 and 3 shards.

Expected pages come from ``sort_reference`` (the contract's value order in plain Python) applied to the
documents the test wrote; both clusters must give exactly them, so the gateway's merge of the shards'
sorted pages is checked too.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.search_support import DOCS_LINK, make_index, one_and_three_shards
from tests.integration.sort_reference import (
    Criterion,
    add_price_and_brand,
    haversine,
    point,
    sort_key,
    sorted_ids,
)
from tests.support.client import client_for
from tests.support.cluster import RunningCluster


def _document(rng: random.Random, doc_id: int) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": doc_id, "title": rng.choice(["shirt", "hat", "shoe"])}
    doc["kind"] = rng.choice(["a", "b", "c"])
    add_price_and_brand(rng, doc)
    doc["rating"] = rng.randint(1, 5)
    doc["secret"] = rng.randint(0, 1000)
    if rng.random() < 0.6:
        doc["_geo"] = {"lat": 48.85 + rng.uniform(-2, 2), "lng": 2.35 + rng.uniform(-2, 2)}
    return doc


_RNG = random.Random(11)
DOCS = [_document(_RNG, doc_id) for doc_id in range(240)]
SETTINGS = {
    "filterableAttributes": ["kind", "rating"],
    "sortableAttributes": ["price", "brand", "rating", "_geo", "secret"],
    "displayedAttributes": ["id", "title", "kind", "price", "brand", "rating", "_geo"],
    "searchableAttributes": ["title"],
}


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with one_and_three_shards("items", DOCS, SETTINGS) as clusters:
        yield clusters


def sort_entries(criteria: list[Criterion]) -> list[str]:
    return [f"{field}:{'asc' if ascending else 'desc'}" for field, ascending in criteria]


def fetch_ids(cluster: RunningCluster, **params: Any) -> tuple[list[int], int]:
    """Through the official client (POST /documents/fetch): the page's ids and ``total``."""
    page = client_for(cluster).index("items").get_documents(params)
    return [doc.id for doc in page.results], page.total


@pytest.mark.parametrize(
    "criteria",
    [
        [("price", True)],
        [("price", False)],
        [("brand", True), ("price", False)],
        [("rating", False), ("brand", False), ("price", True)],
    ],
)
@pytest.mark.parametrize(
    ("filter_", "offset", "limit"), [(None, 0, 300), ("kind = a", 7, 20), ("rating >= 3", 40, 35)]
)
def test_fetch_sorts_filters_and_pages(
    clusters: tuple[RunningCluster, RunningCluster],
    criteria: list[Criterion],
    filter_: str | None,
    offset: int,
    limit: int,
) -> None:
    selected = [doc for doc in DOCS if filter_ is None or _matches(doc, filter_)]
    expected = sorted_ids(selected, criteria)
    params: dict[str, Any] = {"sort": sort_entries(criteria), "offset": offset, "limit": limit}
    if filter_ is not None:
        params["filter"] = filter_
    for cluster in clusters:
        assert fetch_ids(cluster, **params) == (expected[offset : offset + limit], len(selected))


def _matches(doc: dict[str, Any], filter_: str) -> bool:
    if filter_ == "kind = a":
        return bool(doc["kind"] == "a")
    assert filter_ == "rating >= 3"
    return bool(doc["rating"] >= 3)


def test_get_form_keeps_geo_points_intact(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    center = (48.0, 2.0)
    located = sorted((haversine(center, p), doc["id"]) for doc in DOCS if (p := point(doc)) is not None)
    missing = sorted_ids([doc for doc in DOCS if point(doc) is None], [("rating", False)])
    expected = [doc_id for _, doc_id in located] + missing
    for cluster in clusters:
        response = httpx.get(
            f"{cluster.url}/indexes/items/documents",
            params={"sort": "_geoPoint(48.0, 2.0):asc,rating:desc", "limit": "500", "fields": "id"},
            timeout=30,
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert [doc["id"] for doc in body["results"]] == expected
        assert body["results"][0] == {"id": expected[0]}
        assert body["total"] == len(DOCS)


def test_ids_fields_and_stored_fields(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    """``ids`` narrows, ``fields`` projects; a document route shows stored fields whatever
    ``displayedAttributes`` says, and a sort needs no ``sort`` ranking rule there."""
    wanted = [doc for doc in DOCS if doc["id"] % 7 == 0]
    expected = sorted_ids(wanted, [("secret", False)])
    for cluster in clusters:
        response = httpx.post(
            f"{cluster.url}/indexes/items/documents/fetch",
            json={
                "ids": [str(doc["id"]) for doc in wanted] + ["999"],
                "sort": ["secret:desc"],
                "fields": ["id", "secret"],
                "offset": 2,
                "limit": 10,
            },
            timeout=30,
        )
        assert response.status_code == 200, response.text
        body = response.json()
        by_id = {doc["id"]: doc for doc in DOCS}
        assert body["results"] == [{"id": i, "secret": by_id[i]["secret"]} for i in expected[2:12]]
        assert (body["offset"], body["limit"], body["total"]) == (2, 10, len(wanted))
    one = clusters[0]
    make_index(one, "norule", DOCS[:30], {"sortableAttributes": ["rating"], "rankingRules": ["words"]})
    page = client_for(one).index("norule").get_documents({"sort": ["rating:asc"], "limit": 30})
    assert [doc.id for doc in page.results] == sorted_ids(DOCS[:30], [("rating", True)])


NOT_SORTABLE = (
    "Attribute `title` is not sortable. Available sortable attributes are:"
    " `_geo, brand, price, rating, <..hidden-attributes>`."
)
SYNTAX = (
    "Invalid syntax for the sort parameter: expected expression ending by `:asc` or `:desc`, found `price`."
)


@pytest.mark.parametrize(
    ("sort", "message"),
    [
        (["title:asc"], NOT_SORTABLE),
        (["price"], SYNTAX),
        (["price:up"], SYNTAX.replace("`price`", "`price:up`")),
        (
            ["_geo:asc"],
            "`_geo` is a reserved keyword and thus can't be used as a sort expression. Use the"
            " _geoPoint(latitude, longitude) built-in rule to sort on _geo field coordinates.",
        ),
        (
            ["_geoDistance:desc"],
            "`_geoDistance` is a reserved keyword and thus can't be used as a sort expression.",
        ),
        (
            ["_geoPoint(91, 0):asc"],
            "Bad latitude `91`. Latitude must be contained between -90 and 90 degrees.",
        ),
        (
            ["_geoPoint(1):asc"],
            "Invalid syntax for the geo parameter: expected expression formated like `_geoPoint(latitude,"
            " longitude)` and ending by `:asc` or `:desc`, found `_geoPoint(1)`.",
        ),
    ],
)
def test_sort_errors(clusters: tuple[RunningCluster, RunningCluster], sort: list[str], message: str) -> None:
    cluster = clusters[1]
    expected = {
        "message": message,
        "code": "invalid_document_sort",
        "type": "invalid_request",
        "link": DOCS_LINK + "invalid_document_sort",
    }
    post = httpx.post(f"{cluster.url}/indexes/items/documents/fetch", json={"sort": sort}, timeout=30)
    get = httpx.get(f"{cluster.url}/indexes/items/documents", params={"sort": ",".join(sort)}, timeout=30)
    for response in (post, get):
        assert response.status_code == 400
        assert response.json() == expected


def test_sort_type_error_and_unknown_index(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    cluster = clusters[0]
    response = httpx.post(
        f"{cluster.url}/indexes/items/documents/fetch", json={"sort": "price:asc"}, timeout=30
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_document_sort"
    assert response.json()["message"].startswith("Invalid value type at `.sort`")
    response = httpx.get(f"{cluster.url}/indexes/nope/documents", params={"sort": "price:asc"}, timeout=30)
    assert response.status_code == 404
    assert response.json()["code"] == "index_not_found"


# --- hidden sort rules in _rankingScoreDetails (search.md §1.6) ---------------------------------------

HIDDEN = {"order": 0, "value": "<hidden>"}


def test_sort_on_a_hidden_field_is_redacted(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    criteria = [("secret", True), ("price", False)]
    for cluster in clusters:
        body = (
            client_for(cluster)
            .index("items")
            .search("", {"sort": sort_entries(criteria), "limit": 300, "showRankingScoreDetails": True})
        )
        assert [hit["id"] for hit in body["hits"]] == sorted_ids(DOCS, criteria)
        for hit in body["hits"]:
            assert "secret" not in hit
            assert list(hit["_rankingScoreDetails"]) == ["<hidden-rule-0>", "price:desc"]
            assert hit["_rankingScoreDetails"]["<hidden-rule-0>"] == HIDDEN
            assert hit["_rankingScoreDetails"]["price:desc"]["order"] == 1
        keyword = (
            client_for(cluster)
            .index("items")
            .search("shirt", {"sort": ["secret:desc"], "showRankingScoreDetails": True})
        )
        rules = [
            "words",
            "typo",
            "proximity",
            "attributeRank",
            "<hidden-rule-4>",
            "wordPosition",
            "exactness",
        ]
        assert [list(hit["_rankingScoreDetails"]) for hit in keyword["hits"]] == [rules] * len(
            keyword["hits"]
        )
        assert keyword["hits"][0]["_rankingScoreDetails"]["<hidden-rule-4>"] == {**HIDDEN, "order": 4}


def test_custom_rule_on_a_hidden_field_is_redacted(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    cluster = clusters[1]
    settings = {**SETTINGS, "rankingRules": ["secret:desc", "words", "sort"]}
    make_index(cluster, "custom", DOCS, settings)
    body = (
        client_for(cluster)
        .index("custom")
        .search("", {"sort": ["rating:asc"], "limit": 300, "showRankingScoreDetails": True})
    )
    assert [hit["id"] for hit in body["hits"]] == sorted_ids(DOCS, [("secret", False), ("rating", True)])
    details = body["hits"][0]["_rankingScoreDetails"]
    assert details == {
        "<hidden-rule-0>": HIDDEN,
        "rating:asc": {"order": 1, "value": body["hits"][0]["rating"]},
    }


# --- federated search with sort (search.md §2.3) -------------------------------------------------------

LEFT = [doc for doc in DOCS if doc["id"] % 2 == 0]
RIGHT = [doc for doc in DOCS if doc["id"] % 2 == 1]


@pytest.fixture(scope="module")
def halves(clusters: tuple[RunningCluster, RunningCluster]) -> tuple[RunningCluster, RunningCluster]:
    for cluster in clusters:
        make_index(cluster, "left", LEFT, SETTINGS)
        make_index(cluster, "right", RIGHT, SETTINGS)
    return clusters


def federated(
    cluster: RunningCluster, queries: list[dict[str, Any]], **federation: Any
) -> list[dict[str, Any]]:
    body = client_for(cluster).multi_search(queries, federation={"limit": 300, **federation})
    hits: list[dict[str, Any]] = body["hits"]
    return hits


def identities(hits: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(hit["_federation"]["indexUid"], hit["id"]) for hit in hits]


def expected_merge(
    criteria: list[Criterion], first: str, docs: list[dict[str, Any]] = DOCS
) -> list[tuple[str, int]]:
    """Both halves by the sort values; equal values: the index of ``first`` (its query wins the tie),
    then insertion order."""
    index_of = {doc["id"]: ("left" if doc["id"] % 2 == 0 else "right") for doc in docs}
    order = sorted_ids(docs, criteria)
    position = {doc_id: rank for rank, doc_id in enumerate(order)}
    keys = {doc["id"]: tuple(sort_key(doc, f, a) for f, a in criteria) for doc in docs}
    merged = sorted(order, key=lambda i: (keys[i], index_of[i] != first, position[i]))
    return [(index_of[doc_id], doc_id) for doc_id in merged]


@pytest.mark.parametrize("weights", [(1.0, 1.0), (1.0, 5.0), (0.5, 1.0)])
def test_placeholder_queries_merge_by_sort_values(
    halves: tuple[RunningCluster, RunningCluster], weights: tuple[float, float]
) -> None:
    """Sort values are not weighted; only ties fall back to the weighted score, then query order."""
    criteria = [("price", True), ("brand", False)]
    queries = [
        {"indexUid": uid, "sort": sort_entries(criteria), "federationOptions": {"weight": weight}}
        for uid, weight in zip(("left", "right"), weights, strict=True)
    ]
    first = "right" if weights[1] > weights[0] else "left"
    expected = expected_merge(criteria, first)
    for cluster in halves:
        assert identities(federated(cluster, queries)) == expected
        assert identities(federated(cluster, queries, offset=31, limit=17)) == expected[31:48]


def test_keyword_queries_compare_weighted_scores_before_sort_values(
    halves: tuple[RunningCluster, RunningCluster],
) -> None:
    """Every ``shirt`` title is the whole query, so relevancy ties within a query and the sort orders;
    across queries the first group, the weighted score of the rules before ``sort``, decides first."""
    criteria = [("price", True)]

    def matches(docs: list[dict[str, Any]], uid: str) -> list[tuple[str, int]]:
        return [(uid, i) for i in sorted_ids([d for d in docs if d["title"] == "shirt"], criteria)]

    queries = [
        {"indexUid": "left", "q": "shirt", "sort": ["price:asc"]},
        {"indexUid": "right", "q": "shirt", "sort": ["price:asc"], "federationOptions": {"weight": 2.0}},
    ]
    mixed = [{"indexUid": "left", "sort": ["price:asc"]}, queries[1]]
    equal = [queries[0], {**queries[1], "federationOptions": {"weight": 1.0}}]
    shirts = [doc for doc in DOCS if doc["title"] == "shirt"]
    for cluster in halves:
        assert identities(federated(cluster, queries)) == matches(RIGHT, "right") + matches(LEFT, "left")
        # A placeholder hit has only its sort value, which does not compare with a score: the hit with
        # more groups left (the keyword one) goes first.
        expected_mixed = matches(RIGHT, "right") + [("left", i) for i in sorted_ids(LEFT, criteria)]
        assert identities(federated(cluster, mixed)) == expected_mixed
        assert identities(federated(cluster, equal)) == expected_merge(criteria, "left", shirts)


def _incompatible(first: str, second: str, reason: str) -> str:
    return f"The results of queries #0 and #1 are incompatible:\n  1. {first}\n  2. {second}\n  - {reason}"


OPPOSITE = "cannot compare an ascending sort with a descending sort"
INCOMPATIBLE_SORTS = [
    (
        [{"indexUid": "left", "sort": ["price:asc"]}, {"indexUid": "right", "sort": ["price:desc"]}],
        _incompatible(
            "`queries[0].sort[0]` (query #0 on index `left`): ascending sort rule `price:asc`",
            "`queries[1].sort[0]` (query #1 on index `right`): descending sort rule `price:desc`",
            OPPOSITE,
        ),
    ),
    (
        # The first groups compare (both ascending); the second ones do not. A sort on a field that
        # displayedAttributes hides is not named.
        [
            {"indexUid": "left", "sort": ["price:asc", "secret:asc"]},
            {"indexUid": "right", "sort": ["rating:asc", "brand:desc"]},
        ],
        _incompatible(
            "`queries[0].sort[1]` (query #0 on index `left`): ascending sort rule on a hidden field",
            "`queries[1].sort[1]` (query #1 on index `right`): descending sort rule `brand:desc`",
            OPPOSITE,
        ),
    ),
    (
        [
            {"indexUid": "left", "q": "shirt", "sort": ["_geoPoint(48.85, 2.35):asc"]},
            {"indexUid": "right", "q": "hat", "sort": ["price:asc"]},
        ],
        _incompatible(
            "`queries[0].sort[0]` (query #0 on index `left`): ascending sort rule"
            " `_geoPoint(48.85, 2.35):asc`",
            "`queries[1].sort[0]` (query #1 on index `right`): ascending sort rule `price:asc`",
            "cannot compare a geo distance sort with a field value sort",
        ),
    ),
    (
        # A custom ranking rule sorts too; the placeholder query keeps only its sort rules.
        [{"indexUid": "left", "sort": ["rating:asc"]}, {"indexUid": "custom"}],
        _incompatible(
            "`queries[0].sort[0]` (query #0 on index `left`): ascending sort rule `rating:asc`",
            "`custom.rankingRules[0]` (query #1 on index `custom`): descending sort rule `price:desc`",
            OPPOSITE,
        ),
    ),
]


@pytest.mark.parametrize(("queries", "message"), INCOMPATIBLE_SORTS)
def test_queries_whose_sorts_do_not_compare_are_refused(
    halves: tuple[RunningCluster, RunningCluster], queries: list[dict[str, Any]], message: str
) -> None:
    cluster = halves[0]
    make_index(cluster, "custom", RIGHT, {**SETTINGS, "rankingRules": ["price:desc", "words", "typo"]})
    response = httpx.post(
        f"{cluster.url}/multi-search", json={"queries": queries, "federation": {}}, timeout=30
    )
    assert response.status_code == 400, response.text
    error = response.json()
    assert (error["code"], error["type"]) == ("invalid_multi_search_query_ranking_rules", "invalid_request")
    assert error["message"] == message


def test_sorts_that_compare_merge_whatever_their_fields(
    halves: tuple[RunningCluster, RunningCluster],
) -> None:
    """Two ascending sorts on different fields compare value against value; a relevancy group met
    first ends the comparison, so what follows it is never checked."""
    by_price = [{"indexUid": "left", "sort": ["price:asc"]}, {"indexUid": "right", "sort": ["rating:asc"]}]
    after_relevancy = [
        {"indexUid": "left", "q": "shirt", "sort": ["price:asc"]},
        {"indexUid": "right", "sort": ["price:desc"]},
    ]
    for queries in (by_price, after_relevancy):
        response = httpx.post(
            f"{halves[0].url}/multi-search", json={"queries": queries, "federation": {}}, timeout=30
        )
        assert response.status_code == 200, response.text
