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


AUTHORS = [
    {"id": "a", "name": "Ann", "country": "fr"},
    {"id": "b", "name": "Bob", "country": "uk"},
    {"id": "7", "name": "Sam", "country": "fr"},
]
NOVELS = [
    {"id": 1, "author": "a", "title": "first"},
    {"id": 2, "author": "b", "title": "second"},
    {"id": 3, "author": ["a", "b", 4], "title": "third"},
    {"id": 4, "author": "nobody", "title": "fourth"},
    {"id": 5, "author": 7, "title": "fifth"},
    {"id": 6, "author": {"k": 1}, "title": "sixth"},
]


@pytest.fixture(scope="module")
def joined(secured: RunningCluster) -> RunningCluster:
    """``novels.author`` holds ids of ``writers``."""
    _features(secured, True)
    for path, body in (
        ("writers/documents", AUTHORS),
        ("writers/settings", {"filterableAttributes": ["country", "name"], "displayedAttributes": ["name"]}),
        ("novels/documents", NOVELS),
        (
            "novels/settings",
            {
                "filterableAttributes": ["author"],
                "foreignKeys": [{"foreignIndexUid": "writers", "fieldName": "author"}],
            },
        ),
    ):
        method = "PATCH" if path.endswith("settings") else "POST"
        assert _wait(secured, _call(secured, method, f"indexes/{path}"[8:], body))["status"] == "succeeded"
    return secured


def _ids(response: httpx.Response, key: str = "hits") -> list[int]:
    assert response.status_code == 200, response.text
    return sorted(hit["id"] for hit in response.json()[key])


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("_foreign(author, country = fr)", [1, 3, 5]),
        ("NOT _foreign(author, country = fr)", [2, 4, 6]),
        ("_foreign(author, country = de)", []),
        ("_foreign(author, country = uk AND name = Bob) OR author = a", [1, 2, 3]),
        ("_foreign('author', name IN [Ann, Sam])", [1, 3, 5]),
    ],
)
def test_foreign_filters_join_the_foreign_index(
    joined: RunningCluster, expression: str, expected: list[int]
) -> None:
    _features(joined, True)
    body = {"filter": expression, "attributesToRetrieve": ["id"]}
    assert _ids(_call(joined, "POST", "novels/search", body)) == expected
    assert (
        _ids(_call(joined, "POST", "novels/documents/fetch", {"filter": expression}), "results") == expected
    )
    queries = {"queries": [{"indexUid": "novels", "filter": [expression]}]}
    multi = httpx.post(f"{joined.url}/multi-search", json=queries, headers=ADMIN)
    assert sorted(hit["id"] for hit in multi.json()["results"][0]["hits"]) == expected


def test_facet_search_counts_the_joined_documents(joined: RunningCluster) -> None:
    _features(joined, True)
    body = {"facetName": "author", "filter": "_foreign(author, country = uk)"}
    response = _call(joined, "POST", "novels/facet-search", body)
    assert response.status_code == 200, response.text
    # Novels 2 and 3 (by Bob); 3 is also by Ann (its number 4 is no string facet value).
    assert response.json()["facetHits"] == [{"value": "a", "count": 1}, {"value": "b", "count": 2}]


@pytest.mark.parametrize(
    ("expression", "code", "message"),
    [
        (
            "_foreign(title, country = fr)",
            "invalid_search_filter",
            "Index `novels`: Field `title` is not a foreign key",
        ),
        (
            "_foreign(author, _foreign(x, a = 1))",
            "invalid_search_filter",
            "Index `novels`: Nested foreign filters are not supported",
        ),
        (
            "_foreign(author, id = b)",
            "invalid_document_filter",
            "Index `writers`: Attribute `id` is not filterable. Available filterable attribute patterns are:"
            " `country`, `name`.\n18:20 _foreign(author, id = b)",
        ),
        (
            "_foreign(author, country = fr) OR id = 2",
            "invalid_search_filter",
            "Index `novels`: Attribute `id` is not filterable. Available filterable attribute patterns are:"
            ' `author`.\n27:29 "author" IN ["a", "7"] OR id = 2',
        ),
    ],
)
def test_join_errors(joined: RunningCluster, expression: str, code: str, message: str) -> None:
    _features(joined, True)
    _error(_call(joined, "POST", "novels/search", {"filter": expression}), code, message)


def test_delete_by_filter_refuses_foreign_filters(joined: RunningCluster) -> None:
    body = {"filter": "_foreign(author, country = fr)"}
    _features(joined, False)
    response = _call(joined, "POST", "novels/documents/delete", body)
    _error(response, "feature_not_enabled", FOREIGN_OFF.replace("name = x", "country = fr"))
    _features(joined, True)
    _error(
        _call(joined, "POST", "novels/documents/delete", body),
        "invalid_document_filter",
        "Filter condition `_foreign` is not supported for this endpoint."
        "\n10:16 _foreign(author, country = fr)",
    )


def test_search_hits_are_hydrated(joined: RunningCluster) -> None:
    _features(joined, True)
    body = {"q": "", "attributesToHighlight": ["*"], "sort": None}
    hits = {hit["id"]: hit for hit in _call(joined, "POST", "novels/search", body).json()["hits"]}
    ann, bob, sam = {"name": "Ann"}, {"name": "Bob"}, {"name": "Sam"}
    assert hits[1]["author"] == ann and hits[1]["_formatted"]["author"] == ann
    assert hits[3]["author"] == [ann, bob, 4]  # numbers inside arrays stay
    assert hits[4]["author"] == {} and hits[5]["author"] == sam
    assert hits[6]["author"] == {"k": 1}
    highlighted = _call(joined, "POST", "novels/search", {"q": "a", "attributesToHighlight": ["*"]}).json()
    first = next(hit for hit in highlighted["hits"] if hit["id"] == 1)
    assert first["author"] == ann and first["_formatted"]["author"] == "<em>a</em>"
    federated = {"federation": {}, "queries": [{"indexUid": "novels", "filter": "author = b"}]}
    merged = httpx.post(f"{joined.url}/multi-search", json=federated, headers=ADMIN).json()["hits"]
    assert [hit["author"] for hit in merged if hit["id"] == 2] == [bob]
    documents = _call(joined, "GET", "novels/documents/1").json()
    assert documents["author"] == "a", "document reads are not hydrated"
    _features(joined, False)
    plain = _call(joined, "POST", "novels/search", {"filter": "author = a"}).json()["hits"]
    assert {hit["id"]: hit["author"] for hit in plain}[1] == "a"
