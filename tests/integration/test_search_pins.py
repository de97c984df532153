"""Dynamic search rules pin documents in search results (flag ``dynamicSearchRules``; search.md §1.6
``pin: {order, position}``; precedence as openapi.json describes it).

Where the contract is silent, the expectations are the reference engine's answers on the same eight
documents (``gateway/search/pins.py`` lists them): a pinned document need not match the query but
must match the filter, is counted once in totals and facets, and keeps its position through sort,
offset and pages. The cluster has two shards, so pinned documents come from either.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.client import switch_features, wait_task
from tests.support.cluster import RunningCluster

INDEX = "pins"
DOCUMENTS = [
    {"id": 1, "t": "apple pie", "g": "food", "n": 5},
    {"id": 2, "t": "apple tart", "g": "food", "n": 3},
    {"id": 3, "t": "banana split", "g": "dessert", "n": 9},
    {"id": 4, "t": "cherry apple", "g": "fruit", "n": 1},
    {"id": 5, "t": "date", "g": "fruit", "n": 7},
    {"id": 6, "t": "apple juice", "g": "drink", "n": 2},
    {"id": 7, "t": "orange juice", "g": "drink", "n": 8},
    {"id": "x8", "t": "kiwi", "g": "fruit", "n": 4},
]


def pin(document_id: Any, position: int, index: str | None = INDEX) -> dict[str, Any]:
    selector: dict[str, Any] = {"id": str(document_id)}
    if index is not None:
        selector["indexUid"] = index
    return {"selector": selector, "action": {"type": "pin", "position": position}}


@pytest.fixture(scope="module")
def index(cluster: RunningCluster) -> str:
    url = cluster.url
    wait_task(cluster, httpx.post(f"{url}/indexes/{INDEX}/documents", json=DOCUMENTS).json()["taskUid"])
    settings = {"filterableAttributes": ["g", "n"], "sortableAttributes": ["n"]}
    wait_task(cluster, httpx.patch(f"{url}/indexes/{INDEX}/settings", json=settings).json()["taskUid"])
    return INDEX


@pytest.fixture
def rules(cluster: RunningCluster, index: str) -> Iterator[Any]:
    """Sets rules (uid -> body) and clears them all after the test."""
    switch_features(cluster, dynamicSearchRules=True)

    def put(uid: str, body: dict[str, Any]) -> None:
        response = httpx.patch(f"{cluster.url}/dynamic-search-rules/{uid}", json=body)
        assert response.status_code == 202, response.text
        assert wait_task(cluster, response.json()["taskUid"])["status"] == "succeeded"

    yield put
    wait_task(cluster, httpx.delete(f"{cluster.url}/dynamic-search-rules").json()["taskUid"])
    switch_features(cluster, dynamicSearchRules=False)


def search(cluster: RunningCluster, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(f"{cluster.url}/indexes/{INDEX}/search", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def ids(result: dict[str, Any]) -> list[Any]:
    return [hit["id"] for hit in result["hits"]]


APPLE = {"query": {"words": "apple"}}


def test_a_pinned_document_need_not_match_the_query(cluster: RunningCluster, rules: Any) -> None:
    rules("promo", {"conditions": APPLE, "actions": [pin(5, 1)]})
    result = search(cluster, {"q": "apple", "showRankingScore": True, "showRankingScoreDetails": True})
    assert ids(result) == [1, 5, 2, 6, 4]
    assert result["estimatedTotalHits"] == 5
    pinned = result["hits"][1]
    assert pinned["_rankingScore"] == 1.0
    assert pinned["_rankingScoreDetails"] == {"pin": {"order": 0, "position": 1}}
    assert "pin" not in result["hits"][0]["_rankingScoreDetails"]
    # Words are compared case and accents aside, in any order; a prefix or another form is no word.
    assert ids(search(cluster, {"q": "Äpple"}))[1] == 5
    assert 5 not in ids(search(cluster, {"q": "apples"}))
    assert 5 not in ids(search(cluster, {"q": "appl"}))
    # Negated words and several-word phrases are not the query's words; a one-word phrase is.
    assert 5 not in ids(search(cluster, {"q": '"apple tart"'}))
    assert ids(search(cluster, {"q": '"apple" tart'}))[1] == 5
    assert search(cluster, {"q": "-apple tart"})["hits"] == []


def test_pins_follow_pagination_and_are_formatted_as_hits(cluster: RunningCluster, rules: Any) -> None:
    rules("promo", {"conditions": APPLE, "actions": [pin(5, 1)]})
    assert ids(search(cluster, {"q": "apple", "limit": 1})) == [1]
    assert ids(search(cluster, {"q": "apple", "offset": 1, "limit": 2})) == [5, 2]
    page = search(cluster, {"q": "apple", "page": 2, "hitsPerPage": 1})
    assert ids(page) == [5] and (page["totalHits"], page["totalPages"]) == (5, 5)
    assert search(cluster, {"q": "apple", "limit": 0})["estimatedTotalHits"] == 5
    # A pin scores 1: it passes any threshold.
    strict = search(cluster, {"q": "apple", "rankingScoreThreshold": 0.99})
    assert (ids(strict), strict["estimatedTotalHits"]) == ([5], 1)
    formatted = search(
        cluster, {"q": "apple", "attributesToRetrieve": ["t"], "attributesToHighlight": ["t"], "limit": 2}
    )
    assert formatted["hits"][1] == {"t": "date", "_formatted": {"t": "date"}}
    # With a sort too, the pin keeps its place.
    assert ids(search(cluster, {"q": "apple", "sort": ["n:asc"]})) == [4, 5, 6, 2, 1]


def test_the_filter_applies_to_pinned_documents(cluster: RunningCluster, rules: Any) -> None:
    rules("promo", {"conditions": APPLE, "actions": [pin(5, 0)]})
    filtered = search(cluster, {"q": "apple", "filter": "g = food"})
    assert (ids(filtered), filtered["estimatedTotalHits"]) == ([1, 2], 2)
    # ... but the query's negations do not.
    assert ids(search(cluster, {"q": "apple -date"}))[0] == 5
    # Facets count the pinned document; a matching one is counted and shown once.
    faceted = search(cluster, {"q": "apple", "facets": ["g"]})
    assert faceted["facetDistribution"] == {"g": {"drink": 1, "food": 2, "fruit": 2}}
    none = search(cluster, {"q": "zzzz apple", "facets": ["n"], "matchingStrategy": "all"})
    assert ids(none) == [5] and none["facetStats"] == {"n": {"min": 7.0, "max": 7.0}}
    rules("promo", {"actions": [pin(4, 0)]})
    matching = search(cluster, {"q": "apple"})
    assert (ids(matching), matching["estimatedTotalHits"]) == ([4, 1, 2, 6], 4)


def test_positions_past_the_hits_and_missing_documents(cluster: RunningCluster, rules: Any) -> None:
    rules("promo", {"conditions": APPLE, "actions": [pin(5, 10), pin(99, 0), pin("x8", 2, None)]})
    result = search(cluster, {"q": "apple"})
    assert ids(result) == [1, 2, "x8", 6, 4, 5]
    assert result["estimatedTotalHits"] == 6
    assert ids(search(cluster, {"q": "apple", "offset": 4})) == [4, 5]
    rules("elsewhere", {"actions": [pin(7, 0, "other")]})
    assert 7 not in ids(search(cluster, {"q": "apple"}))


def test_precedence_and_order_resolve_conflicts(cluster: RunningCluster, rules: Any) -> None:
    rules("first", {"actions": [pin(5, 0)], "precedence": 2})
    rules("second", {"actions": [pin(7, 0)], "precedence": 1})
    result = search(cluster, {"limit": 3, "showRankingScoreDetails": True})
    assert ids(result) == [7, 5, 1]
    assert [hit["_rankingScoreDetails"] for hit in result["hits"]] == [
        {"pin": {"order": 0, "position": 0}},
        {"pin": {"order": 0, "position": 0}},
        {},
    ]
    rules("second", {"precedence": None})  # no precedence: after every number
    assert ids(search(cluster, {"limit": 3})) == [5, 7, 1]
    # One document pinned twice: the lowest precedence wins, then the first action.
    rules("second", {"actions": [pin(5, 3)], "precedence": 1})
    assert ids(search(cluster, {"limit": 5})) == [1, 2, 3, 5, 4]
    rules("second", {"actions": [pin(7, 1), pin(5, 1), pin(7, 4)], "precedence": 1})
    assert ids(search(cluster, {"limit": 5})) == [1, 7, 5, 2, 3]


def test_conditions(cluster: RunningCluster, rules: Any) -> None:
    rules("promo", {"conditions": {"query": {"isEmpty": True}}, "actions": [pin(5, 0)]})
    assert ids(search(cluster, {"limit": 1})) == [5]
    assert ids(search(cluster, {"q": "...", "limit": 1})) == [5]
    assert ids(search(cluster, {"q": "kiwi"})) == ["x8"]
    # Negated words are no words, nor is the underscore; a phrase's words are.
    assert ids(search(cluster, {"q": "-apple", "limit": 1})) == [5]
    assert ids(search(cluster, {"q": "_", "limit": 1})) == [5]
    assert ids(search(cluster, {"q": '"apple tart"'})) == [2]
    rules("promo", {"conditions": {"query": {"isEmpty": False}}})
    assert ids(search(cluster, {"limit": 1})) == [1]
    assert ids(search(cluster, {"q": "kiwi"})) == [5, "x8"]
    rules("promo", {"conditions": {"query": {"words": "apple pie"}}})
    assert ids(search(cluster, {"q": "pie apple"})) == [5, 1]
    assert 5 not in ids(search(cluster, {"q": "apple"}))
    rules("promo", {"conditions": {"query": {"words": "kiwi"}}})
    assert ids(search(cluster, {"q": "kiwi_x"})) == [5, "x8"]
    rules("promo", {"conditions": {"time": {"start": "2020-01-01T00:00:00Z", "end": "2099-01-01T00:00:00Z"}}})
    assert ids(search(cluster, {"limit": 1})) == [5]
    rules("promo", {"conditions": {"time": {"start": "2099-01-01T00:00:00Z"}}})
    assert ids(search(cluster, {"limit": 1})) == [1]
    rules("promo", {"conditions": {"time": {"end": "2020-01-01T00:00:00Z"}}})
    assert ids(search(cluster, {"limit": 1})) == [1]
    rules("promo", {"conditions": None, "active": False})
    assert ids(search(cluster, {"limit": 1})) == [1]


FILTERS = [
    None,
    "g = food",
    "g = FOOD",
    "n > 3",
    "g EXISTS",
    "NOT g = fruit",
    "g = food OR g = x",
    "g = food AND n > 1",
    "g = food OR n = 5",
    "NOT (g = x OR n < 1)",
    "NOT (g = x AND n > 1)",
    ["g = food", "n > 1"],
    "g = food AND g EXISTS",
]
# Whether the pin applied, per rule values and filter (FILTERS' order), as the reference answers.
SELECTED = {
    '{"g": "food"}': "-YY-YYYYYYYYY",
    '{"n": 5}': "---YYY-YYYYY-",
    '{"g": "food", "n": 5}': "-------Y-Y-Y-",
    '{"t": "x", "u": 1}': "---------Y---",
    '{"g": null}': "YYYYYYYYYYYYY",
    '{"g": ["food", "drink"]}': "---------Y---",
}


@pytest.mark.parametrize("values", SELECTED)
def test_filter_values_condition(cluster: RunningCluster, rules: Any, values: str) -> None:
    rules("promo", {"conditions": {"filter": {"values": json.loads(values)}}, "actions": [pin(1, 9)]})
    seen = ""
    for raw in FILTERS:
        body: dict[str, Any] = {} if raw is None else {"filter": raw}
        found = ids(search(cluster, body))
        seen += "Y" if found[0] != 1 else "-"  # the pin sends document 1 to the end
    assert seen == SELECTED[values]


def test_multi_search_queries_have_their_pins(cluster: RunningCluster, rules: Any) -> None:
    rules("promo", {"conditions": APPLE, "actions": [pin(5, 1)]})
    body = {"queries": [{"indexUid": INDEX, "q": "apple", "limit": 3}, {"indexUid": INDEX, "q": "kiwi"}]}
    results = httpx.post(f"{cluster.url}/multi-search", json=body).json()["results"]
    assert [ids(result) for result in results] == [[1, 5, 2], ["x8"]]
    assert results[0]["estimatedTotalHits"] == 5


def test_no_pins_while_the_feature_is_off(cluster: RunningCluster, rules: Any) -> None:
    rules("promo", {"actions": [pin(5, 0)]})
    assert ids(search(cluster, {"limit": 1})) == [5]
    switch_features(cluster, dynamicSearchRules=False)
    assert ids(search(cluster, {"limit": 1})) == [1]
    switch_features(cluster, dynamicSearchRules=True)


def test_pinned_documents_take_no_part_in_distinct(cluster: RunningCluster, rules: Any) -> None:
    rules("promo", {"actions": [pin(5, 0)]})
    result = search(cluster, {"q": "apple", "distinct": "g"})
    # 5 and 4 are both fruit: the pin neither deduplicates nor is deduplicated.
    assert (ids(result), result["estimatedTotalHits"]) == ([5, 1, 6, 4], 4)


def _federated(cluster: RunningCluster, queries: list[dict[str, Any]], **federation: Any) -> dict[str, Any]:
    body = {"federation": federation, "queries": [{"indexUid": INDEX, **query} for query in queries]}
    response = httpx.post(f"{cluster.url}/multi-search", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def _origins(result: dict[str, Any]) -> list[tuple[Any, int]]:
    return [(hit["id"], hit["_federation"]["queriesPosition"]) for hit in result["hits"]]


def test_federated_pins_take_merged_positions(cluster: RunningCluster, rules: Any) -> None:
    rules("promo", {"conditions": APPLE, "actions": [pin(5, 1)]})
    weighted = {"q": "apple", "federationOptions": {"weight": 0.5}, "showRankingScoreDetails": True}
    result = _federated(cluster, [{"q": "orange"}, weighted], limit=5)
    assert _origins(result) == [(7, 0), (5, 1), (1, 1), (2, 1), (6, 1)]
    assert result["estimatedTotalHits"] == 6
    pinned = result["hits"][1]
    assert pinned["_federation"]["weightedRankingScore"] == 0.5
    assert pinned["_rankingScoreDetails"] == {"pin": {"order": 0, "position": 1}}
    # Each query pins for itself, as in the reference: a document another query finds shows twice.
    rules("promo", {"actions": [pin(7, 3)]})
    result = _federated(cluster, [{"q": "orange"}, {"q": "apple"}], limit=6)
    assert _origins(result) == [(7, 0), (1, 1), (2, 1), (7, 1), (6, 1), (4, 1)]
    assert result["estimatedTotalHits"] == 5


def test_federated_pins_of_several_queries(cluster: RunningCluster, rules: Any) -> None:
    rules("everywhere", {"actions": [pin(5, 0)]})
    rules("orange", {"conditions": {"query": {"words": "orange"}}, "actions": [pin(3, 0)], "precedence": 1})
    result = _federated(cluster, [{"q": "apple"}, {"q": "orange"}], limit=6)
    assert _origins(result) == [(5, 0), (3, 1), (5, 1), (1, 0), (2, 0), (6, 0)]
    assert result["estimatedTotalHits"] == 7
    shifted = _federated(cluster, [{"q": "apple"}, {"q": "orange"}], limit=6, offset=1)
    assert _origins(shifted) == [(3, 1), (5, 1), (1, 0), (2, 0), (6, 0), (7, 1)]


def test_pins_stay_within_max_total_hits(cluster: RunningCluster, rules: Any) -> None:
    def paginate(setting: Any) -> None:
        body = {"pagination": setting}
        task = httpx.patch(f"{cluster.url}/indexes/{INDEX}/settings", json=body).json()
        assert wait_task(cluster, task["taskUid"])["status"] == "succeeded"

    paginate({"maxTotalHits": 3})
    try:
        rules("promo", {"conditions": APPLE, "actions": [pin(5, 1)]})
        result = search(cluster, {"q": "apple"})
        assert (ids(result), result["estimatedTotalHits"]) == ([1, 5, 2], 5)
        rules("promo", {"actions": [pin(5, 5)]})  # past the last reachable hit: not shown
        assert ids(search(cluster, {"q": "apple"})) == [1, 2, 6]
    finally:
        paginate(None)


def test_rules_of_equal_precedence_pin_in_creation_order(cluster: RunningCluster, rules: Any) -> None:
    rules("zeta", {"actions": [pin(5, 0)]})
    rules("alpha", {"actions": [pin(7, 0)]})
    assert ids(search(cluster, {"limit": 3})) == [5, 7, 1]
    rules("zeta", {"description": "changed, not created"})
    assert ids(search(cluster, {"limit": 3})) == [5, 7, 1]
    response = httpx.delete(f"{cluster.url}/dynamic-search-rules/zeta")
    assert wait_task(cluster, response.json()["taskUid"])["status"] == "succeeded"
    rules("zeta", {"actions": [pin(5, 0)]})  # created again: now the newest
    assert ids(search(cluster, {"limit": 3})) == [7, 5, 1]
