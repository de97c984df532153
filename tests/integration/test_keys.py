"""API keys (core.md §3.6, §3.7): the /keys routes, key values, wildcards, expiry, open mode, durability."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Iterator
from typing import Any

import httpx
import meilisearch
import pytest

from tests.support.auth import MASTER_KEY, bearer, create_key, rfc3339_in, secured_cluster
from tests.support.cluster import RunningCluster

MASTER = bearer(MASTER_KEY)
_FIELDS = ["name", "description", "key", "uid", "actions", "indexes", "expiresAt", "createdAt", "updatedAt"]


@pytest.fixture(scope="module")
def secured() -> Iterator[RunningCluster]:
    with secured_cluster() as cluster:
        yield cluster


def _keys(cluster: RunningCluster, **params: Any) -> dict[str, Any]:
    response = httpx.get(f"{cluster.url}/keys", params=params, headers=MASTER)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()
    assert error["code"] == code, error
    message: str = error["message"]
    return message


def test_default_keys_exist_from_the_first_start(secured: RunningCluster) -> None:
    defaults = [k for k in _keys(secured, limit=100)["results"] if k["name"].startswith("Default ")]
    assert [(k["name"], k["actions"], k["indexes"], k["expiresAt"]) for k in defaults] == [
        ("Default Search API Key", ["search"], ["*"], None),
        ("Default Admin API Key", ["*"], ["*"], None),
        ("Default Read-Only Admin API Key", ["*.get", "keys.get"], ["*"], None),
        ("Default Chat API Key", ["chatCompletions", "search"], ["*"], None),
    ]
    assert defaults[0]["description"] == "Use it to search from the frontend"
    assert defaults[1]["description"] == (
        "Use it for anything that is not a search operation. Caution! Do not expose it on a public frontend"
    )


def test_key_value_is_hmac_sha256_of_the_uid_keyed_with_the_master_key(secured: RunningCluster) -> None:
    uid = "01b4bc42-eb33-4041-b481-254d00cce834"
    created = create_key(secured, uid=uid, actions=["search"], indexes=["*"])
    expected = hmac.new(MASTER_KEY.encode(), uid.encode(), hashlib.sha256).hexdigest()
    assert created["key"] == expected
    assert httpx.get(f"{secured.url}/keys/{expected}", headers=MASTER).json()["uid"] == uid


def test_create_get_update_delete(secured: RunningCluster) -> None:
    created = create_key(
        secured,
        name="indexing",
        description="for the importer",
        actions=["documents.add"],
        indexes=["products_*"],
        expiresAt="2099-01-02T03:04:05Z",
    )
    assert list(created) == _FIELDS
    assert created["expiresAt"] == "2099-01-02T03:04:05Z"
    assert created["createdAt"] == created["updatedAt"]
    by_key = httpx.get(f"{secured.url}/keys/{created['key']}", headers=MASTER).json()
    by_uid = httpx.get(f"{secured.url}/keys/{created['uid'].upper()}", headers=MASTER).json()
    assert by_key == by_uid == created

    patched = httpx.patch(
        f"{secured.url}/keys/{created['uid']}", json={"name": "renamed", "description": None}, headers=MASTER
    )
    assert patched.status_code == 200, patched.text
    updated = patched.json()
    assert (updated["name"], updated["description"]) == ("renamed", None)
    assert updated["createdAt"] == created["createdAt"] and updated["updatedAt"] > created["updatedAt"]
    assert httpx.get(f"{secured.url}/keys/{created['key']}", headers=MASTER).json() == updated

    deleted = httpx.delete(f"{secured.url}/keys/{created['key']}", headers=MASTER)
    assert deleted.status_code == 204 and deleted.content == b""
    missing = httpx.get(f"{secured.url}/keys/{created['uid']}", headers=MASTER)
    assert _error(missing, 404, "api_key_not_found") == f"API key `{created['uid']}` not found."
    assert _error(httpx.delete(f"{secured.url}/keys/nope", headers=MASTER), 404, "api_key_not_found")


def test_the_official_client_manages_keys(secured: RunningCluster) -> None:
    client = meilisearch.Client(secured.url, MASTER_KEY)
    key = client.create_key({"actions": ["search"], "indexes": ["books"], "expiresAt": None, "name": "c"})
    assert client.get_key(key.uid).name == "c"
    assert client.update_key(key.key, {"description": "d"}).description == "d"
    client.delete_key(key.uid)
    assert key.uid not in {k.uid for k in client.get_keys({"limit": 1000}).results}


def test_list_is_newest_first_and_paginated(secured: RunningCluster) -> None:
    uids = [create_key(secured, actions=["search"], indexes=["*"])["uid"] for _ in range(3)]
    page = _keys(secured, offset=0, limit=2)
    assert (page["offset"], page["limit"]) == (0, 2)
    assert [k["uid"] for k in page["results"]] == uids[::-1][:2]
    rest = _keys(secured, offset=2, limit=1)
    assert [k["uid"] for k in rest["results"]] == [uids[0]]
    assert page["total"] == rest["total"] == len(_keys(secured, limit=1000)["results"])
    bad = httpx.get(f"{secured.url}/keys", params={"offset": "x"}, headers=MASTER)
    _error(bad, 400, "invalid_api_key_offset")
    _error(
        httpx.get(f"{secured.url}/keys", params={"limit": "-1"}, headers=MASTER), 400, "invalid_api_key_limit"
    )


_VALID = {"actions": ["search"], "indexes": ["*"], "expiresAt": None}


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        ({"indexes": ["*"], "expiresAt": None}, "missing_api_key_actions", "Missing field `actions`"),
        ({"actions": ["search"], "expiresAt": None}, "missing_api_key_indexes", "Missing field `indexes`"),
        (
            {"actions": ["search"], "indexes": ["*"]},
            "missing_api_key_expires_at",
            "Missing field `expiresAt`",
        ),
        ({**_VALID, "actions": ["doggo"]}, "invalid_api_key_actions", None),
        ({**_VALID, "actions": "search"}, "invalid_api_key_actions", None),
        (
            {**_VALID, "indexes": ["good doggo"]},
            "invalid_api_key_indexes",
            "Invalid value at `.indexes[0]`: `good doggo` is not a valid index uid pattern. Index uid"
            " patterns can be an integer or a string containing only alphanumeric characters, hyphens (-),"
            " underscores (_), and optionally end with a star (*).",
        ),
        ({**_VALID, "indexes": ["a*b"]}, "invalid_api_key_indexes", None),
        (
            {**_VALID, "expiresAt": "2010-11-13T00:00:00Z"},
            "invalid_api_key_expires_at",
            "Invalid value at `.expiresAt`: `2010-11-13T00:00:00Z` is not a valid date. It should follow the"
            " RFC 3339 format to represents a date or datetime in the future or specified as a null value."
            " e.g. 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'.\n",
        ),
        ({**_VALID, "expiresAt": "tomorrow"}, "invalid_api_key_expires_at", None),
        ({**_VALID, "uid": "not-a-uuid"}, "invalid_api_key_uid", None),
        ({**_VALID, "name": 42}, "invalid_api_key_name", None),
        ({**_VALID, "description": ["x"]}, "invalid_api_key_description", None),
        ({**_VALID, "key": "abc"}, "bad_request", None),
        (
            {**_VALID, "actions": ["search", "version"], "indexes": ["movies"]},
            "index_scoped_api_key_with_global_action",
            None,
        ),
    ],
)
def test_create_validation(
    secured: RunningCluster, body: dict[str, Any], code: str, message: str | None
) -> None:
    response = httpx.post(f"{secured.url}/keys", json=body, headers=MASTER)
    text = _error(response, 400, code)
    if message is not None:
        assert text == message


def test_expires_at_accepts_the_contract_formats(secured: RunningCluster) -> None:
    for value, shown in [
        ("2099-01-02", "2099-01-02T00:00:00Z"),
        ("2099-01-02 03:04:05", "2099-01-02T03:04:05Z"),
        ("2099-01-02T03:04:05+01:00", "2099-01-02T02:04:05Z"),
    ]:
        assert create_key(secured, actions=["search"], indexes=["*"], expiresAt=value)["expiresAt"] == shown


def test_duplicate_uid_is_a_conflict(secured: RunningCluster) -> None:
    uid = "5b2a3e66-62d1-4b7c-9c52-7d9b1bde0d4f"
    create_key(secured, uid=uid, actions=["search"], indexes=["*"])
    response = httpx.post(f"{secured.url}/keys", json={**_VALID, "uid": uid}, headers=MASTER)
    assert _error(response, 409, "api_key_already_exists") == (
        f"`uid` field value `{uid}` is already an existing API key."
    )


@pytest.mark.parametrize(
    ("field", "code"),
    [
        ("uid", "immutable_api_key_uid"),
        ("actions", "immutable_api_key_actions"),
        ("indexes", "immutable_api_key_indexes"),
        ("expiresAt", "immutable_api_key_expires_at"),
        ("createdAt", "immutable_api_key_created_at"),
        ("updatedAt", "immutable_api_key_updated_at"),
        ("key", "bad_request"),
    ],
)
def test_update_refuses_everything_but_name_and_description(
    secured: RunningCluster, field: str, code: str
) -> None:
    key = create_key(secured, actions=["search"], indexes=["*"])
    response = httpx.patch(f"{secured.url}/keys/{key['uid']}", json={field: key.get(field)}, headers=MASTER)
    message = _error(response, 400, code)
    if code != "bad_request":
        assert message == f"Immutable field `{field}`: expected one of `description`, `name`"


def _status(cluster: RunningCluster, key: str, method: str, path: str, body: Any = None) -> int:
    response = httpx.request(method, f"{cluster.url}{path}", headers=bearer(key), json=body)
    return response.status_code


def test_wildcard_actions_and_index_patterns(secured: RunningCluster) -> None:
    documents = create_key(secured, actions=["documents.*"], indexes=["prod_*"])["key"]
    reader = create_key(secured, actions=["*.get"], indexes=["*"])["key"]
    assert _status(secured, documents, "POST", "/indexes/prod_a/documents", [{"id": 1}]) == 202
    assert _status(secured, documents, "GET", "/indexes/prod_a/documents") in (200, 404)
    assert _status(secured, documents, "POST", "/indexes/dev/documents", [{"id": 1}]) == 403
    assert _status(secured, documents, "PATCH", "/indexes/prod_a/settings", {}) == 403
    assert _status(secured, reader, "GET", "/version") == 200
    assert _status(secured, reader, "GET", "/indexes") == 200
    assert _status(secured, reader, "PATCH", "/indexes/prod_a/settings", {}) == 403
    assert _status(secured, reader, "GET", "/keys") == 403  # `*.get` does not grant keys.get


def test_an_admin_key_manages_keys_but_a_search_key_does_not(secured: RunningCluster) -> None:
    admin = create_key(secured, actions=["*"], indexes=["*"])["key"]
    search = create_key(secured, actions=["search"], indexes=["*"])["key"]
    assert _status(secured, admin, "POST", "/keys", _VALID) == 201
    assert _status(secured, search, "GET", "/keys") == 403


def test_a_key_stops_working_when_it_expires(secured: RunningCluster) -> None:
    key = create_key(secured, actions=["version"], indexes=["*"], expiresAt=rfc3339_in(1.0))["key"]
    assert _status(secured, key, "GET", "/version") == 200
    time.sleep(1.2)
    assert _status(secured, key, "GET", "/version") == 403


@pytest.mark.parametrize(
    ("header", "status", "code"),
    [
        (None, 401, "missing_authorization_header"),
        ("Basic abc", 401, "missing_authorization_header"),
        ("bearer " + MASTER_KEY, 401, "missing_authorization_header"),
        ("Bearer", 403, "invalid_api_key"),
        ("Bearer " + MASTER_KEY[:-1], 403, "invalid_api_key"),
    ],
)
def test_authorization_header_forms(
    secured: RunningCluster, header: str | None, status: int, code: str
) -> None:
    headers = {} if header is None else {"Authorization": header}
    _error(httpx.get(f"{secured.url}/version", headers=headers), status, code)


def test_without_a_master_key_everything_is_open_but_keys(cluster: RunningCluster) -> None:
    assert httpx.get(f"{cluster.url}/version").status_code == 200
    assert httpx.get(f"{cluster.url}/version", headers=bearer("anything")).status_code == 200
    _error(
        httpx.get(f"{cluster.url}/version", headers={"Authorization": "Basic x"}),
        401,
        "missing_authorization_header",
    )
    _error(httpx.get(f"{cluster.url}/version", headers={"Authorization": "Bearer"}), 403, "invalid_api_key")
    message = _error(httpx.get(f"{cluster.url}/keys"), 401, "missing_master_key")
    assert message == (
        "Meilisearch is running without a master key. To access this API endpoint, you must have set a master"
        " key at launch."
    )
    _error(httpx.post(f"{cluster.url}/keys", json=_VALID, headers=bearer("x")), 401, "missing_master_key")
