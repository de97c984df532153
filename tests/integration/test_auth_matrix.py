"""Every route of the gateway against every kind of credential (core.md §3.7, §3.8).

The routes come from the gateway's own router, so a route added later is in the matrix without
editing this file (a new path parameter needs a value in ``_PATH_VALUES``). One protected cluster
serves the whole module; denied requests change nothing, and the master key's requests come last.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import meilisearch
import pytest

from gateway.auth.actions import granted
from tests.support.auth import (
    MASTER_KEY,
    Route,
    bearer,
    create_key,
    gateway_routes,
    rfc3339_in,
    secured_cluster,
)
from tests.support.cluster import RunningCluster

INDEX = "matrix"
OTHER = "other"
ROUTES = gateway_routes()
_PATH_VALUES = {
    "index_uid": INDEX,
    "document_id": "1",
    "task_uid": "0",
    "batch_uid": "0",
    "rule_uid": "rule",
    "uuid": "x",
    "workspace": "x",
}
_QUERIES = {("POST", "tasks/cancel"): "?uids=0", ("DELETE", "tasks"): "?uids=0"}
_BODIES: dict[tuple[str, str], Any] = {
    ("POST", "indexes"): {"uid": INDEX},
    ("PATCH", "indexes/<index_uid:str>"): {},
    ("POST", "swap-indexes"): [{"indexes": [INDEX, OTHER]}],
    ("POST", "indexes/<index_uid:str>/documents"): [{"id": 2, "title": "world"}],
    ("PUT", "indexes/<index_uid:str>/documents"): [{"id": 2, "title": "world"}],
    ("POST", "indexes/<index_uid:str>/documents/delete-batch"): [2],
    ("POST", "indexes/<index_uid:str>/documents/delete"): {"filter": "id = 2"},
    ("POST", "indexes/<index_uid:str>/documents/fetch"): {},
    ("POST", "indexes/<index_uid:str>/fields"): {},
    ("POST", "indexes/<index_uid:str>/search"): {"q": "hello"},
    ("POST", "multi-search"): {"queries": [{"indexUid": INDEX, "q": "hello"}]},
    ("PATCH", "indexes/<index_uid:str>/settings"): {},
    ("POST", "keys"): {"actions": ["search"], "indexes": ["*"], "expiresAt": None},
    ("PATCH", "keys/<uid_or_key:str>"): {"name": "renamed"},
    ("PATCH", "experimental-features"): {},
}
# Routes naming their index outside the path: a key for another index gets the plain 403 there.
_INDEX_IN_BODY = {("POST", "indexes"), ("POST", "swap-indexes"), ("POST", "multi-search")}
# Actions of routes without an index: only keys on every index may use them (core.md §3.6).
_GLOBAL_ACTIONS = {
    "version", "keys.get", "keys.create", "keys.update", "keys.delete",
    "experimental.get", "experimental.update", "tasks.compact", "network.get", "network.update",
    "dynamicSearchRules.get",
    "dynamicSearchRules.update", "dynamicSearchRules.delete", "metrics.get", "webhooks.get",
    "webhooks.create", "webhooks.update", "webhooks.delete", "dumps.create", "snapshots.create", "export",
    "chats.get", "chats.delete", "chatsSettings.get", "chatsSettings.update",
}  # fmt: skip
_CONCRETE_ACTIONS = sorted({route.action for route in ROUTES} - {"public"})
CREDENTIALS = ("none", "wrong", "no_action", "other_index", "expired", "deleted", "tenant", "master")
INVALID = "The provided API key is invalid."


@pytest.fixture(scope="module")
def secured() -> Iterator[RunningCluster]:
    with secured_cluster() as cluster:
        yield cluster


@pytest.fixture(scope="module")
def credentials(secured: RunningCluster) -> dict[str, Any]:
    """A key per credential kind; ``no_action`` maps each action to a key holding every other one."""
    started = time.monotonic()
    expiring = create_key(secured, actions=["*"], indexes=["*"], expiresAt=rfc3339_in(2))
    admin = meilisearch.Client(secured.url, MASTER_KEY)
    for uid in (INDEX, OTHER):
        admin.wait_for_task(admin.index(uid).add_documents([{"id": 1, "title": "hello"}]).task_uid)
    deleted = create_key(secured, actions=["*"], indexes=["*"])
    assert httpx.delete(f"{secured.url}/keys/{deleted['uid']}", headers=bearer(MASTER_KEY)).status_code == 204
    search_key = next(k for k in admin.get_keys().results if k.name == "Default Search API Key")
    values: dict[str, Any] = {
        "wrong": "not-a-key",
        "other_index": create_key(secured, actions=["*"], indexes=[OTHER])["key"],
        "expired": expiring["key"],
        "deleted": deleted["key"],
        "tenant": admin.generate_tenant_token(search_key.uid, ["*"], api_key=search_key.key),
        "master": MASTER_KEY,
        "no_action": {
            action: create_key(secured, actions=_all_but(action), indexes=["*"])["key"]
            for action in _CONCRETE_ACTIONS
        },
        "victim": create_key(secured, actions=["search"], indexes=["*"])["uid"],
    }
    time.sleep(max(0.0, 2.2 - (time.monotonic() - started)))
    return values


def _all_but(action: str) -> list[str]:
    """Every route action except ``action`` and the wildcards granting it (``documents.*`` is itself
    the action of ``/documents/edit``)."""
    return [a for a in _CONCRETE_ACTIONS if action not in granted([a])]


def _url(secured: RunningCluster, route: Route, victim: str) -> str:
    values = {**_PATH_VALUES, "uid_or_key": victim}
    path = re.sub(r"<(\w+):str>", lambda m: values[m.group(1)], route.path)
    return f"{secured.url}/{path}{_QUERIES.get((route.method, route.path), '')}"


def _expected(credential: str, route: Route) -> tuple[int, str, str | None] | None:
    """(status, code, message) of the refusal, or None when authorisation must let it through."""
    if route.action == "public" or credential == "master":
        return None
    if credential == "none":
        return 401, "missing_authorization_header", None
    if credential == "tenant":
        return None if route.action == "search" else (403, "invalid_api_key", INVALID)
    if credential != "other_index":
        return 403, "invalid_api_key", INVALID
    if "<index_uid:str>" in route.path:
        message = f'The API key cannot acces the index `{INDEX}`, authorized indexes are ["{OTHER}"].'
        return 403, "invalid_api_key", message
    if route.action in _GLOBAL_ACTIONS:
        return 403, "invalid_api_key", INVALID
    if (route.method, route.path) in _INDEX_IN_BODY:
        prefix = "Inside `.queries[0]`: " if route.path == "multi-search" else ""
        return 403, "invalid_api_key", prefix + INVALID
    return None  # list routes: allowed, narrowed to the key's indexes


def _body(secured: RunningCluster, route: Route, url: str) -> Any:
    if (route.method, route.path) in _BODIES:
        return _BODIES[route.method, route.path]
    if "/settings/" in route.path and route.method in ("PUT", "PATCH"):
        # The current value of a setting is a valid update of it.
        return httpx.get(url, headers=bearer(MASTER_KEY)).json()
    return None


@pytest.mark.parametrize("credential", CREDENTIALS)
@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} /{r.path}")
def test_route_authorisation(
    secured: RunningCluster, credentials: dict[str, Any], route: Route, credential: str
) -> None:
    url = _url(secured, route, credentials["victim"])
    key = credentials[credential] if credential != "none" else None
    if credential == "no_action":
        if route.action == "public":
            pytest.skip("public routes need no action")
        key = key[route.action]
    headers = bearer(key) if key is not None else {}
    body = _body(secured, route, url)
    response = (
        httpx.request(route.method, url, headers=headers, json=body)
        if body is not None
        else (httpx.request(route.method, url, headers=headers))
    )
    expected = _expected(credential, route)
    if expected is None:
        assert response.status_code not in (401, 403), response.text
        return
    status, code, message = expected
    assert response.status_code == status, response.text
    error = response.json()
    assert (error["code"], error["type"]) == (code, "auth")
    if message is not None:
        assert error["message"] == message


def test_matrix_covers_every_route_kind() -> None:
    """The router gives the list: keys, search, documents, settings, tasks and public routes are all in."""
    actions = {route.action for route in ROUTES}
    assert {"public", "search", "keys.create", "documents.add", "settings.update", "tasks.get"} <= actions
    assert len(ROUTES) > 90
