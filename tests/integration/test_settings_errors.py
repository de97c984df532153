"""Settings routes' synchronous errors over raw HTTP: status, code, type and message (search.md §6)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

_BAD_UID = "bad!uid"  # (a space would arrive percent-encoded: the gateway does not decode path params)
_SUB_ROUTES = {
    "displayed-attributes": "PUT",
    "searchable-attributes": "PUT",
    "filterable-attributes": "PUT",
    "sortable-attributes": "PUT",
    "ranking-rules": "PUT",
    "stop-words": "PUT",
    "non-separator-tokens": "PUT",
    "separator-tokens": "PUT",
    "dictionary": "PUT",
    "synonyms": "PUT",
    "distinct-attribute": "PUT",
    "proximity-precision": "PUT",
    "typo-tolerance": "PATCH",
    "faceting": "PATCH",
    "pagination": "PATCH",
    "embedders": "PATCH",
    "search-cutoff-ms": "PUT",
    "localized-attributes": "PUT",
    "facet-search": "PUT",
    "prefix-search": "PUT",
}


def _call(cluster: RunningCluster, method: str, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
    if body is not None:
        kwargs["json"] = body
    return httpx.request(method, f"{cluster.url}/indexes/{path}", **kwargs)


def _assert_error(response: httpx.Response, status: int, code: str, message: str | None = None) -> None:
    assert response.status_code == status, response.text
    error = response.json()
    assert list(error) == ["message", "code", "type", "link"]
    assert (error["code"], error["type"]) == (code, "invalid_request")
    assert error["link"] == f"https://docs.meilisearch.com/errors#{code}"
    if message is not None:
        assert error["message"] == message


@pytest.mark.parametrize(
    ("method", "path", "body", "code", "message"),
    [
        (
            "PATCH",
            "settings",
            {"rankingRules": ["words", "foo"]},
            "invalid_settings_ranking_rules",
            "Invalid value at `.rankingRules[1]`: `foo` ranking rule is invalid. Valid ranking rules are "
            "words, typo, sort, proximity, attribute, exactness and custom ranking rules.",
        ),
        (
            "PUT",
            "settings/ranking-rules",
            ["attribute", "wordPosition"],
            "invalid_settings_ranking_rules",
            "Invalid value: Mixed usage of the attribute, attributeRank, and wordPosition ranking rules. "
            "You must either use the attribute ranking rule alone or the attributeRank and wordPosition "
            "ranking rules.",
        ),
        (
            "PUT",
            "settings/stop-words",
            "doggo",
            "invalid_settings_stop_words",
            'Invalid value type: expected an array, but found a string: `"doggo"`',
        ),
        (
            "PATCH",
            "settings",
            {"displayedAttributes": "doggo"},
            "invalid_settings_displayed_attributes",
            'Invalid value type at `.displayedAttributes`: expected an array, but found a string: `"doggo"`',
        ),
        (
            "PATCH",
            "settings",
            {"filterableAttributes": [{"attributePatterns": ["a"], "features": {"facetSearch": 1}}]},
            "invalid_settings_filterable_attributes",
            "Invalid value type at `.filterableAttributes[0].features.facetSearch`: expected a boolean, but "
            "found a positive integer: `1`",
        ),
        (
            "PATCH",
            "settings/pagination",
            {"maxTotalHits": 0},
            "invalid_settings_pagination",
            "Invalid value at `.maxTotalHits`: a non-zero integer value lower than `18446744073709551615` "
            "was expected, but found a zero",
        ),
        (
            "PATCH",
            "settings",
            {"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 6, "twoTypos": 5}}},
            "invalid_settings_typo_tolerance",
            "Invalid value at `.typoTolerance.minWordSizeForTypos`: `minWordSizeForTypos` setting is "
            "invalid. `oneTypo` and `twoTypos` fields should be between `0` and `255`, and `twoTypos` "
            "should be greater or equals to `oneTypo` but found `oneTypo: 6` and twoTypos: 5`.",
        ),
        (
            "PATCH",
            "settings/faceting",
            {"sortFacetValuesBy": {"*": "desc"}},
            "invalid_settings_faceting",
            "Unknown value `desc` at `.sortFacetValuesBy.*`: expected one of `alpha`, `count`",
        ),
        (
            "PUT",
            "settings/proximity-precision",
            "byword",
            "invalid_settings_proximity_precision",
            "Unknown value `byword`: did you mean `byWord`? expected one of `byWord`, `byAttribute`",
        ),
        (
            "PUT",
            "settings/prefix-search",
            True,
            "invalid_settings_prefix_search",
            "Invalid value type: expected a string, but found a boolean: `true`",
        ),
        (
            "PUT",
            "settings/search-cutoff-ms",
            -5,
            "invalid_settings_search_cutoff_ms",
            "Invalid value type: expected a positive integer, but found a negative integer: `-5`",
        ),
        (
            "PUT",
            "settings/facet-search",
            "no",
            "invalid_settings_facet_search",
            'Invalid value type: expected a boolean, but found a string: `"no"`',
        ),
        (
            "PUT",
            "settings/localized-attributes",
            [{"attributePatterns": ["*"], "locales": ["klingon"]}],
            "invalid_settings_localized_attributes",
            None,
        ),
        (
            "PATCH",
            "settings/embedders",
            {"default": True},
            "invalid_settings_embedders",
            "Invalid value type at `.default`: expected an object, but found a boolean: `true`",
        ),
        (
            "PUT",
            "settings/synonyms",
            {"a": "b"},
            "invalid_settings_synonyms",
            'Invalid value type at `.a`: expected an array, but found a string: `"b"`',
        ),
        (
            "PATCH",
            "settings",
            {"stopWord": []},
            "bad_request",
            None,
        ),
        ("PATCH", "settings", ["stopWords"], "bad_request", None),
    ],
)
def test_validation_errors(
    cluster: RunningCluster, method: str, path: str, body: Any, code: str, message: str | None
) -> None:
    _assert_error(_call(cluster, method, f"errors/{path}", body), 400, code, message)


def test_unknown_field_names_the_expected_ones(cluster: RunningCluster) -> None:
    response = _call(cluster, "PATCH", "errors/settings", {"stopWord": []})
    message = response.json()["message"]
    assert message.startswith(
        "Unknown field `stopWord`: did you mean `stopWords`? expected one of `displayedAttributes`, "
        "`searchableAttributes`, `filterableAttributes`, `sortableAttributes`, `foreignKeys`, `rankingRules`,"
    )
    assert message.endswith("`facetSearch`, `prefixSearch`, `chat`")


def test_rejected_writes_enqueue_nothing(cluster: RunningCluster) -> None:
    before = httpx.get(f"{cluster.url}/tasks", params={"limit": 1}).json()["total"]
    _call(cluster, "PATCH", "nothing/settings", {"rankingRules": ["nope"]})
    _call(cluster, "PUT", "nothing/settings/stop-words", "x")
    assert httpx.get(f"{cluster.url}/tasks", params={"limit": 1}).json()["total"] == before
    assert httpx.get(f"{cluster.url}/indexes/nothing").status_code == 404


@pytest.mark.parametrize("path", ["settings", *(f"settings/{p}" for p in _SUB_ROUTES)])
def test_invalid_index_uid_on_every_verb(cluster: RunningCluster, path: str) -> None:
    verbs = ["GET", "DELETE", _SUB_ROUTES.get(path.removeprefix("settings/"), "PATCH")]
    for verb in verbs:
        response = _call(cluster, verb, f"{_BAD_UID}/{path}", None if verb in ("GET", "DELETE") else [])
        _assert_error(response, 400, "invalid_index_uid")
        assert response.json()["message"].startswith(f"`{_BAD_UID}` is not a valid index uid.")


@pytest.mark.parametrize("path", ["settings", "settings/ranking-rules", "settings/typo-tolerance"])
def test_reading_a_missing_index(cluster: RunningCluster, path: str) -> None:
    _assert_error(
        _call(cluster, "GET", f"missing/{path}"), 404, "index_not_found", "Index `missing` not found."
    )


@pytest.mark.parametrize("path", ["settings", "settings/stop-words", "settings/typo-tolerance"])
def test_content_type_and_body_rules(cluster: RunningCluster, path: str) -> None:
    method = "PUT" if path.endswith("stop-words") else "PATCH"
    url = f"ct/{path}"
    _assert_error(_call(cluster, method, url, content=b"{}"), 415, "missing_content_type")
    wrong = _call(cluster, method, url, content=b"{}", headers={"Content-Type": "text/plain"})
    _assert_error(
        wrong,
        415,
        "invalid_content_type",
        "The Content-Type `text/plain` is invalid. Accepted values for the Content-Type header are: "
        "`application/json`",
    )
    json_headers = {"Content-Type": "application/json"}
    _assert_error(
        _call(cluster, method, url, content=b"", headers=json_headers),
        400,
        "missing_payload",
        "A json payload is missing.",
    )
    malformed = _call(cluster, method, url, content=b'{"a": ', headers=json_headers)
    _assert_error(malformed, 400, "malformed_payload")
    suffixed = _call(
        cluster, method, url, content=b"null", headers={"Content-Type": "application/merge-patch+json"}
    )
    if path == "settings":
        _assert_error(suffixed, 400, "bad_request", "Invalid value type: expected an object, but found null")
    else:
        assert suffixed.status_code == 202, "a `+json` type is JSON, and null resets a single setting"


@pytest.mark.parametrize(
    ("path", "verb", "key", "feature"),
    [("chat", "PATCH", "chat", "chatCompletions")],
)
def test_experimental_settings_answer_feature_not_enabled(
    cluster: RunningCluster, path: str, verb: str, key: str, feature: str
) -> None:
    expected = f"Using the `{key}` index setting requires enabling the `{feature}` experimental feature. See "
    for method in ("GET", verb, "DELETE"):
        response = _call(cluster, method, f"exp/settings/{path}", {} if method == verb else None)
        _assert_error(response, 400, "feature_not_enabled")
        assert response.json()["message"].startswith(expected)
    in_body = _call(cluster, "PATCH", "exp/settings", {key: {}})
    _assert_error(in_body, 400, "feature_not_enabled")
    assert in_body.json()["message"].startswith(expected)
    _assert_error(_call(cluster, "GET", f"{_BAD_UID}/settings/{path}"), 400, "invalid_index_uid")


@pytest.mark.parametrize(("path", "verb"), list(_SUB_ROUTES.items()))
def test_wrong_verb_is_405(cluster: RunningCluster, path: str, verb: str) -> None:
    other = "PATCH" if verb == "PUT" else "PUT"
    response = _call(cluster, other, f"verbs/settings/{path}", [])
    assert response.status_code == 405 and response.content == b""


@pytest.mark.parametrize("method", ["PUT", "POST"])
def test_whole_settings_only_take_patch(cluster: RunningCluster, method: str) -> None:
    assert _call(cluster, method, "verbs/settings", {}).status_code == 405


def test_valid_writes_answer_the_summarized_task(cluster: RunningCluster) -> None:
    response = _call(cluster, "PUT", "summary/settings/stop-words", ["a"])
    assert response.status_code == 202
    task = response.json()
    assert list(task) == ["taskUid", "indexUid", "status", "type", "enqueuedAt"]
    assert (task["indexUid"], task["status"], task["type"]) == ("summary", "enqueued", "settingsUpdate")
    assert wait_task(cluster, task["taskUid"])["status"] == "succeeded"
    reset = _call(cluster, "DELETE", "summary/settings")
    assert reset.status_code == 202 and reset.json()["type"] == "settingsUpdate"
    assert wait_task(cluster, reset.json()["taskUid"])["status"] == "succeeded"
    assert client_for(cluster).index("summary").get_stop_words() == []
