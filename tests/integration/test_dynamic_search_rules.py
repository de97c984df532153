"""``/dynamic-search-rules`` (flag ``dynamicSearchRules``; codes 278-288 of core.md; task types
``dsrUpdate`` and ``dsrClear`` with ``indexUid`` ``.meili_dsr``).

The reference's community build implements these routes; its answers settle the rule object, the PATCH
semantics (named fields replaced, ``null`` resets), the list filter, the task details and the messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.search_support import assert_error
from tests.support.client import switch_features, wait_task
from tests.support.cluster import RunningCluster

PIN = {"selector": {"indexUid": "books", "id": "1"}, "action": {"type": "pin", "position": 0}}
RULE = {
    "description": "Black Friday promo",
    "precedence": 2,
    "conditions": {"query": {"isEmpty": True}, "time": {"start": "2025-11-28T00:00:00Z", "end": None}},
    "actions": [PIN],
}
ROUTES_OFF = (
    "Using the `/dynamic-search-rules` routes requires enabling the `dynamic search rules` experimental "
    "feature. "
    "See https://github.com/orgs/meilisearch/discussions/884"
)


@pytest.fixture
def enabled(cluster: RunningCluster) -> Iterator[None]:
    switch_features(cluster, dynamicSearchRules=True)
    yield
    wait_task(cluster, httpx.delete(f"{cluster.url}/dynamic-search-rules").json()["taskUid"])
    switch_features(cluster, dynamicSearchRules=False)


def _patch(cluster: RunningCluster, uid: str, body: Any) -> httpx.Response:
    return httpx.patch(f"{cluster.url}/dynamic-search-rules/{uid}", json=body, timeout=30)


def _list(cluster: RunningCluster, body: Any) -> httpx.Response:
    return httpx.post(f"{cluster.url}/dynamic-search-rules", json=body, timeout=30)


def _done(cluster: RunningCluster, response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 202, response.text
    summary = response.json()
    assert (summary["indexUid"], summary["status"]) == (".meili_dsr", "enqueued")
    return wait_task(cluster, summary["taskUid"])


def test_create_read_update_delete(cluster: RunningCluster, enabled: None) -> None:
    task = _done(cluster, _patch(cluster, "promo", RULE))
    assert task["status"] == "succeeded" and task["type"] == "dsrUpdate"
    assert task["details"] == {"rule": RULE, "updatedRules": 1}
    rule = httpx.get(f"{cluster.url}/dynamic-search-rules/promo").json()
    assert list(rule) == [
        "uid",
        "description",
        "lastUpdatedAt",
        "precedence",
        "active",
        "conditions",
        "actions",
    ]
    assert rule == {"uid": "promo", **RULE, "lastUpdatedAt": task["enqueuedAt"], "active": True}
    # Fields named are replaced whole; null resets a field (active back to true, conditions to {}).
    _done(cluster, _patch(cluster, "promo", {"conditions": {"query": {"words": "dune"}}, "active": False}))
    _done(cluster, _patch(cluster, "promo", {"description": None, "active": None}))
    rule = httpx.get(f"{cluster.url}/dynamic-search-rules/promo").json()
    assert "description" not in rule and rule["active"] is True
    assert rule["conditions"] == {"query": {"words": "dune"}} and rule["actions"] == [PIN]
    deleted = _done(cluster, httpx.delete(f"{cluster.url}/dynamic-search-rules/promo"))
    assert (deleted["type"], deleted["details"]) == ("dsrUpdate", {"updatedRules": 1})
    message = "Dynamic search rule `promo` not found."
    response = httpx.get(f"{cluster.url}/dynamic-search-rules/promo")
    assert_error(response, "dynamic_search_rule_not_found", message, status=404)


def test_list_pages_and_filters(cluster: RunningCluster, enabled: None) -> None:
    _patch(cluster, "b-rule", {"description": "Summer sale", "active": False})
    _patch(cluster, "a-rule", {"description": "Black Friday deals"})
    _done(cluster, _patch(cluster, "c-rule", {}))
    every = _list(cluster, {}).json()
    # The most recently changed first, as the reference lists them.
    assert [r["uid"] for r in every["results"]] == ["c-rule", "a-rule", "b-rule"]
    assert (every["offset"], every["limit"], every["total"]) == (0, 20, 3)
    page = _list(cluster, {"offset": 1, "limit": 1}).json()
    assert ([r["uid"] for r in page["results"]], page["total"]) == (["a-rule"], 3)
    _done(cluster, _patch(cluster, "b-rule", {"description": "Summer sales"}))
    assert [r["uid"] for r in _list(cluster, {}).json()["results"]] == ["b-rule", "c-rule", "a-rule"]
    assert [r["uid"] for r in _list(cluster, {"filter": {"active": False}}).json()["results"]] == ["b-rule"]
    found = _list(cluster, {"filter": {"query": "friday"}}).json()
    assert ([r["uid"] for r in found["results"]], found["total"]) == (["a-rule"], 1)
    # The reference's `last` strategy without typos or prefixes: words are dropped from the end.
    assert _list(cluster, {"filter": {"query": "DEALS zzz"}}).json()["total"] == 1
    for missed in ("zzz deals", "fri", "fridya"):
        assert _list(cluster, {"filter": {"query": missed}}).json()["total"] == 0, missed
    cleared = _done(cluster, httpx.delete(f"{cluster.url}/dynamic-search-rules"))
    assert (cleared["type"], cleared["details"]) == ("dsrClear", {"deletedDocuments": 3})
    assert _list(cluster, {}).json()["total"] == 0


def test_rule_tasks_batch_together_and_are_listed_by_type(cluster: RunningCluster, enabled: None) -> None:
    uids = [_patch(cluster, f"r{n}", {}).json()["taskUid"] for n in range(3)]
    tasks = [wait_task(cluster, uid) for uid in uids]
    assert all(t["status"] == "succeeded" for t in tasks)
    listed = httpx.get(f"{cluster.url}/tasks", params={"types": "dsrUpdate"}).json()
    assert set(uids) <= {t["uid"] for t in listed["results"]}


def test_rules_survive_a_scheduler_kill(cluster: RunningCluster, enabled: None) -> None:
    _done(cluster, _patch(cluster, "kept", RULE))
    old = cluster.kill_backend("scheduler")
    cluster.wait_replaced("scheduler", old)
    assert httpx.get(f"{cluster.url}/dynamic-search-rules/kept").json()["actions"] == [PIN]


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            {"active": "x"},
            "invalid_dynamic_search_rule_active",
            'Invalid value type at `.active`: expected a boolean, but found a string: `"x"`',
        ),
        (
            {"description": 3},
            "invalid_dynamic_search_rule_description",
            "Invalid value type at `.description`: expected a string, but found a positive integer: `3`",
        ),
        (
            {"precedence": -1},
            "invalid_dynamic_search_rule_priority",
            "Invalid value type at `.precedence`: expected a positive integer, but found a negative "
            "integer: `-1`",
        ),
        (
            {"priority": 1},
            "bad_request",
            "Unknown field `priority`: expected one of `description`, `precedence`, `active`, `conditions`, "
            "`actions`",
        ),
        (
            {"conditions": {"foo": 1}},
            "invalid_dynamic_search_rule_conditions",
            "Unknown field `foo` inside `.conditions`: expected one of `time`, `query`, `filter`",
        ),
        (
            {"conditions": {"time": {"start": "2025-01-01"}}},
            "invalid_dynamic_search_rule_conditions",
            "Invalid value at `.conditions.time.start`: `2025-01-01` is not a valid date. It should follow "
            "the RFC 3339 "
            "format to represents a date or datetime in the future or specified as a null value. e.g. "
            "'YYYY-MM-DD' or "
            "'YYYY-MM-DD HH:MM:SS'.\n",
        ),
        (
            {"conditions": {"query": {"isEmpty": False, "words": "dune"}}},
            "bad_request",
            "Invalid value at `.conditions.query`: either `isEmpty` or `words` can be used, not both at once",
        ),
        (
            {
                "conditions": {
                    "time": {"start": "2021-03-04T05:06:07.120Z", "end": "2020-01-01T10:00:00+02:00"}
                }
            },
            "bad_request",
            "Invalid value at `.conditions.time`: `end` (`2020-01-01 10:00:00.0 +02:00:00`) should be later"
            " than `start` (`2021-03-04 5:06:07.12 +00:00:00`)",
        ),
        (
            {"actions": [{"selector": {"id": "1"}, "action": {"type": "boost"}}]},
            "invalid_dynamic_search_rule_actions",
            "Invalid value at `.actions[0].action`: Incorrect tag value",
        ),
        (
            {"actions": [{"selector": {"id": "1"}, "action": {"type": "pin"}}]},
            "invalid_dynamic_search_rule_actions",
            "Missing field `position` inside `.actions[0].action`",
        ),
        (
            {"actions": [{"selector": {"id": "1"}, "action": {"position": 1}}]},
            "invalid_dynamic_search_rule_actions",
            "Missing field `type` inside `.actions[0].action`",
        ),
        (
            {"actions": [{"selector": {"id": 1}, "action": {"type": "pin", "position": 1}}]},
            "invalid_dynamic_search_rule_actions",
            "Invalid value type at `.actions[0].selector.id`: expected a string, but found a positive "
            "integer: `1`",
        ),
        (
            {"actions": [{"action": {"type": "pin", "position": 1}}]},
            "invalid_dynamic_search_rule_actions",
            "Missing field `selector` inside `.actions[0]`",
        ),
    ],
)
def test_patch_errors(cluster: RunningCluster, enabled: None, body: Any, code: str, message: str) -> None:
    assert_error(_patch(cluster, "bad", body), code, message)


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            {"offset": -1},
            "invalid_dynamic_search_rule_offset",
            "Invalid value type at `.offset`: expected a positive integer, but found a negative integer: "
            "`-1`",
        ),
        (
            {"limit": "a"},
            "invalid_dynamic_search_rule_limit",
            'Invalid value type at `.limit`: expected a positive integer, but found a string: `"a"`',
        ),
        (
            {"filter": 3},
            "invalid_dynamic_search_rule_filter",
            "Invalid value type at `.filter`: expected an object, but found a positive integer: `3`",
        ),
        (
            {"filter": {"query": 3}},
            "invalid_dynamic_search_rule_filter_query",
            "Invalid value type at `.filter.query`: expected a string, but found a positive integer: `3`",
        ),
        (
            {"filter": {"active": 3}},
            "invalid_dynamic_search_rule_filter_active",
            "Invalid value type at `.filter.active`: expected a boolean, but found a positive integer: `3`",
        ),
        (
            {"filter": {"x": 3}},
            "invalid_dynamic_search_rule_filter",
            "Unknown field `x` inside `.filter`: expected one of `query`, `active`",
        ),
    ],
)
def test_list_errors(cluster: RunningCluster, enabled: None, body: Any, code: str, message: str) -> None:
    assert_error(_list(cluster, body), code, message)


def test_invalid_uid_is_not_found(cluster: RunningCluster, enabled: None) -> None:
    response = httpx.get(f"{cluster.url}/dynamic-search-rules/bad%20uid")
    assert_error(
        response, "dynamic_search_rule_not_found", status=404, prefix="`bad uid` is not a valid index uid."
    )


def test_flag_off(cluster: RunningCluster) -> None:
    url = f"{cluster.url}/dynamic-search-rules"
    list_off = ROUTES_OFF.replace(
        "Using the `/dynamic-search-rules` routes", "Calling the `POST /dynamic-search-rules` route"
    )
    assert_error(_list(cluster, {}), "feature_not_enabled", list_off)
    get_off = ROUTES_OFF.replace(
        "Using the `/dynamic-search-rules` routes", "Calling the `GET /dynamic-search-rules/{:ruleUid}` route"
    )
    assert_error(httpx.get(f"{url}/x"), "feature_not_enabled", get_off)
    assert_error(_patch(cluster, "x", {}), "feature_not_enabled", ROUTES_OFF)
    assert_error(httpx.delete(f"{url}/x"), "feature_not_enabled", ROUTES_OFF)
    assert_error(httpx.delete(url), "feature_not_enabled", ROUTES_OFF)
    # Bodies are read before the flag.
    message = "Invalid value type at `.active`: expected a boolean, but found a positive integer: `3`"
    assert_error(_patch(cluster, "x", {"active": 3}), "invalid_dynamic_search_rule_active", message)
