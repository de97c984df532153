"""The ``foreignKeys`` experimental feature: the index setting (search.md §6) and ``_foreign(..)`` filters."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.support.auth import MASTER_KEY, bearer, create_key, secured_cluster
from tests.support.client import wait_task
from tests.support.cluster import RunningCluster

ADMIN = bearer(MASTER_KEY)
LINK = "https://docs.meilisearch.com/errors#"
KEYS = [{"foreignIndexUid": "authors", "fieldName": "author"}]
NOT_ENABLED = (
    "setting `foreignKeys` in the index settings requires enabling the `foreign_keys` experimental feature."
    " See https://github.com/orgs/meilisearch/discussions/873"
)


@pytest.fixture(scope="module")
def secured() -> Iterator[RunningCluster]:
    with secured_cluster() as cluster:
        response = httpx.post(f"{cluster.url}/indexes/books/documents", json=[{"id": 1}], headers=ADMIN)
        _wait(cluster, response)
        yield cluster


def _features(cluster: RunningCluster, on: bool) -> None:
    response = httpx.patch(f"{cluster.url}/experimental-features", json={"foreignKeys": on}, headers=ADMIN)
    assert response.status_code == 200 and response.json()["foreignKeys"] is on


_NO_BODY = object()


def _call(
    cluster: RunningCluster, method: str, path: str, body: Any = _NO_BODY, key: str = MASTER_KEY
) -> httpx.Response:
    """``body`` None is sent as JSON ``null``; leave it out to send no body."""
    content = None if body is _NO_BODY else orjson.dumps(body)
    headers = {**bearer(key), "Content-Type": "application/json"} if content is not None else bearer(key)
    return httpx.request(method, f"{cluster.url}/indexes/{path}", content=content, headers=headers)


def _wait(cluster: RunningCluster, response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 202, response.text
    return wait_task(cluster, response.json()["taskUid"], key=MASTER_KEY)


def _task(cluster: RunningCluster, response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 202, response.text
    return dict(httpx.get(f"{cluster.url}/tasks/{response.json()['taskUid']}", headers=ADMIN).json())


def _error(response: httpx.Response, code: str, message: str) -> None:
    assert response.status_code == 400, response.text
    assert response.json() == {
        "message": message,
        "code": code,
        "type": "invalid_request",
        "link": LINK + code,
    }


def test_feature_off_reads_and_resets_but_refuses_a_value(secured: RunningCluster) -> None:
    _features(secured, False)
    get = _call(secured, "GET", "books/settings/foreign-keys")
    assert get.status_code == 200 and get.json() == []
    assert "foreignKeys" not in _call(secured, "GET", "books/settings").json()
    for method, path, body in (
        ("PUT", "books/settings/foreign-keys", []),
        ("PUT", "books/settings/foreign-keys", KEYS),
        ("PATCH", "books/settings", {"foreignKeys": KEYS}),
    ):
        _error(_call(secured, method, path, body), "feature_not_enabled", NOT_ENABLED)
    for method, path, body in (
        ("PUT", "books/settings/foreign-keys", None),
        ("DELETE", "books/settings/foreign-keys", None),
        ("PATCH", "books/settings", {"foreignKeys": None}),
    ):
        task = _task(secured, _call(secured, method, path, body))
        assert task["details"] == {"foreignKeys": None}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "Invalid value type: expected an array, but found an object: `{}`"),
        ([1], "Invalid value type at `[0]`: expected an object, but found a positive integer: `1`"),
        ([{"foreignIndexUid": "authors"}], "Missing field `fieldName` inside `[0]`"),
        ([{"fieldName": "author"}], "Missing field `foreignIndexUid` inside `[0]`"),
        (
            [{"foreignIndexUid": "authors", "fieldName": "author", "x": 1}],
            "Unknown field `x` inside `[0]`: expected one of `foreignIndexUid`, `fieldName`",
        ),
        (
            [{"foreignIndexUid": 1, "fieldName": "author"}],
            "Invalid value type at `[0].foreignIndexUid`: expected a string, but found a positive integer:"
            " `1`",
        ),
        (
            [{"foreignIndexUid": "authors", "fieldName": None}],
            "Invalid value type at `[0].fieldName`: expected a string, but found null",
        ),
    ],
)
def test_validation_errors(secured: RunningCluster, body: Any, message: str) -> None:
    for on in (False, True):  # the body is checked before the feature
        _features(secured, on)
        _error(
            _call(secured, "PUT", "books/settings/foreign-keys", body),
            "invalid_settings_foreign_keys",
            message,
        )
    in_settings = _call(secured, "PATCH", "books/settings", {"foreignKeys": body})
    expected = message.replace("at `[0]", "at `.foreignKeys[0]").replace(
        "inside `[0]", "inside `.foreignKeys[0]"
    )
    expected = expected.replace("Invalid value type:", "Invalid value type at `.foreignKeys`:")
    _error(in_settings, "invalid_settings_foreign_keys", expected)


def test_stored_echoed_and_reset(secured: RunningCluster) -> None:
    _features(secured, True)
    sent = [{"fieldName": "author", "foreignIndexUid": "authors"}, {"foreignIndexUid": "b", "fieldName": "x"}]
    stored = [KEYS[0], {"foreignIndexUid": "b", "fieldName": "x"}]
    task = _wait(secured, _call(secured, "PUT", "books/settings/foreign-keys", sent))
    assert task["status"] == "succeeded" and task["details"] == {"foreignKeys": stored}
    assert _call(secured, "GET", "books/settings/foreign-keys").json() == stored
    settings = _call(secured, "GET", "books/settings").json()
    assert (
        list(settings)[3:6] == ["sortableAttributes", "foreignKeys", "rankingRules"] and len(settings) == 21
    )
    assert settings["foreignKeys"] == stored
    _features(secured, False)  # hidden from GET /settings, still stored
    assert "foreignKeys" not in _call(secured, "GET", "books/settings").json()
    assert _call(secured, "GET", "books/settings/foreign-keys").json() == stored
    reset = _wait(secured, _call(secured, "DELETE", "books/settings"))
    assert (
        list(reset["details"])[3:5] == ["sortableAttributes", "foreignKeys"] and len(reset["details"]) == 22
    )
    assert _call(secured, "GET", "books/settings/foreign-keys").json() == []


def test_setting_routes_need_settings_actions(secured: RunningCluster) -> None:
    _features(secured, True)
    reader = create_key(secured, actions=["settings.get"], indexes=["books"])["key"]
    writer = create_key(secured, actions=["settings.update"], indexes=["books"])["key"]
    assert _call(secured, "GET", "books/settings/foreign-keys", key=reader).status_code == 200
    assert _call(secured, "GET", "books/settings/foreign-keys", key=writer).status_code == 403
    assert _call(secured, "PUT", "books/settings/foreign-keys", KEYS, key=reader).status_code == 403
    assert _wait(secured, _call(secured, "PUT", "books/settings/foreign-keys", KEYS, key=writer))[
        "status"
    ] == ("succeeded")
    assert _call(secured, "PUT", "other/settings/foreign-keys", KEYS, key=writer).status_code == 403
    missing = httpx.get(f"{secured.url}/indexes/books/settings/foreign-keys")
    assert missing.status_code == 401


FOREIGN_OFF = (
    "using a foreign filter requires enabling the `foreign_keys` experimental feature. See"
    " https://github.com/orgs/meilisearch/discussions/873\n10:16 _foreign(author, name = x)"
)


def test_foreign_filters_need_the_feature(secured: RunningCluster) -> None:
    _features(secured, False)
    body = {"filter": "_foreign(author, name = x)"}
    for path in ("books/search", "books/documents/fetch"):
        _error(_call(secured, "POST", path, body), "feature_not_enabled", FOREIGN_OFF)


@pytest.mark.parametrize(
    ("expression", "found", "where"),
    [
        ("_foreign(author country = fr)", "country = fr)", "17:30"),
        ("_foreign(author, country = fr", "", "30:30"),
    ],
)
def test_malformed_foreign_filters(secured: RunningCluster, expression: str, found: str, where: str) -> None:
    _features(secured, True)
    message = (
        "Was expecting a field name and an condition inside `_foreign(..)` filter but instead found"
        f" `{found}`.\n{where} {expression}"
    )
    _error(_call(secured, "POST", "books/search", {"filter": expression}), "invalid_search_filter", message)


def test_the_join_itself_answers_a_clear_error(secured: RunningCluster) -> None:
    """Not implemented (see README): a well-formed ``_foreign`` says so, on the route's filter code."""
    _features(secured, True)
    expression = "_foreign(author, country = fr)"
    message = (
        "Filtering with `_foreign` is not supported yet by this server: filter the foreign index first,"
        f" then on `author` with `IN [...]`.\n10:16 {expression}"
    )
    _error(_call(secured, "POST", "books/search", {"filter": expression}), "invalid_search_filter", message)
    fetch = _call(secured, "POST", "books/documents/fetch", {"filter": expression})
    _error(fetch, "invalid_document_filter", message)
