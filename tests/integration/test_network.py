"""``GET/PATCH /network`` and ``POST /network/control`` (core.md §3.15, flag ``network``).

Expectations come from the contract (object shape, partial PATCH, ``leader`` → 451, ``previousRemotes`` →
``unexpected_network_previous_remotes``, uuid ``version``) and from the reference's community build for the
rest (messages, a removed remote leaving its shards, ``/network/control`` answering 451).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.search_support import assert_error
from tests.support.client import switch_features
from tests.support.cluster import RunningCluster

NIL = "00000000-0000-0000-0000-000000000000"
FLAG_OFF = (
    "Using the /network route requires enabling the `network` experimental feature. "
    "See https://github.com/orgs/meilisearch/discussions/805"
)


@pytest.fixture
def enabled(cluster: RunningCluster) -> Iterator[None]:
    switch_features(cluster, network=True)
    yield
    switch_features(cluster, network=False)


def _patch(cluster: RunningCluster, body: Any) -> httpx.Response:
    return httpx.patch(f"{cluster.url}/network", json=body, timeout=30)


def test_flag_off(cluster: RunningCluster) -> None:
    assert_error(httpx.get(f"{cluster.url}/network"), "feature_not_enabled", FLAG_OFF)
    assert_error(_patch(cluster, {}), "feature_not_enabled", FLAG_OFF)
    # The body is read first, as the reference does.
    message = "Invalid value type at `.self`: expected a string, but found a positive integer: `3`"
    assert_error(_patch(cluster, {"self": 3}), "invalid_network_self", message)


def test_patch_is_partial_and_survives_a_scheduler_kill(cluster: RunningCluster, enabled: None) -> None:
    first = httpx.get(f"{cluster.url}/network").json()
    assert set(first) == {"self", "remotes", "shards", "leader", "version"}
    body = {
        "self": "ms-0",
        "remotes": {
            "ms-0": {"url": "http://localhost:7700", "searchApiKey": "s"},
            "ms-1": {"url": "http://b"},
        },
        "shards": {"s0": {"remotes": ["ms-0"]}},
    }
    response = _patch(cluster, body)
    assert response.status_code == 200, response.text
    network = response.json()
    assert network["self"] == "ms-0" and network["leader"] is None
    assert network["remotes"]["ms-0"] == {
        "url": "http://localhost:7700", "searchApiKey": "s", "writeApiKey": None, "status": "available"
    }  # fmt: skip
    assert uuid.UUID(network["version"]).version == 7 and network["version"] != NIL
    changed = _patch(
        cluster, {"remotes": {"ms-0": {"writeApiKey": "w"}}, "shards": {"s0": {"addRemotes": ["ms-1"]}}}
    )
    assert changed.json()["remotes"]["ms-0"]["searchApiKey"] == "s"
    assert changed.json()["remotes"]["ms-0"]["writeApiKey"] == "w"
    assert changed.json()["shards"] == {"s0": {"remotes": ["ms-0", "ms-1"]}}
    assert changed.json()["version"] != network["version"]
    # Removing a remote removes it from every shard.
    removed = _patch(cluster, {"remotes": {"ms-0": None}}).json()
    assert set(removed["remotes"]) == {"ms-1"} and removed["shards"] == {"s0": {"remotes": ["ms-1"]}}
    # Acknowledged means durable: a killed scheduler comes back with the same record.
    old = cluster.kill_backend("scheduler")
    cluster.wait_replaced("scheduler", old)
    assert httpx.get(f"{cluster.url}/network").json() == removed
    cleared = _patch(cluster, {"remotes": {"ms-1": None}, "shards": {"s0": None}, "self": None}).json()
    assert (cleared["self"], cleared["remotes"], cleared["shards"]) == (None, {}, {})


@pytest.mark.parametrize(
    ("body", "code", "status", "message"),
    [
        (
            {"leader": "ms-0"},
            "requires_enterprise_edition",
            451,
            "Meilisearch Enterprise Edition is required to set `network.leader`",
        ),
        (
            {"previousRemotes": {}},
            "unexpected_network_previous_remotes",
            400,
            "Unexpected `previousRemotes` in network call.\n  - Note: `previousRemote` is reserved for "
            "internal use.",
        ),
        ({"remotes": {"x": {}}}, "missing_network_url", 400, "Missing field `.remotes.x.url`"),
        (
            {"remotes": {"x": {"url": "not a url"}}},
            "invalid_network_url",
            400,
            "Invalid `.remotes.x.url` (`not a url`): relative URL without a base",
        ),
        (
            {"remotes": {"x": {"url": 3}}},
            "invalid_network_url",
            400,
            "Invalid value type at `.remotes.x.url`: expected a string, but found a positive integer: `3`",
        ),
        (
            {"remotes": {"x": {"url": "http://a", "searchApiKey": 3}}},
            "invalid_network_search_api_key",
            400,
            "Invalid value type at `.remotes.x.searchApiKey`: expected a string, but found a positive "
            "integer: `3`",
        ),
        (
            {"remotes": {"x": {"url": "http://a", "foo": 3}}},
            "invalid_network_remotes",
            400,
            "Unknown field `foo` inside `.remotes.x`: expected one of `url`, `searchApiKey`, `writeApiKey`",
        ),
        (
            {"shards": {"s": {"remotes": 3}}},
            "invalid_network_remotes",
            400,
            "Invalid value type at `.shards.s.remotes`: expected an array, but found a positive integer: `3`",
        ),
        (
            {"shards": {"s": {"foo": 3}}},
            "invalid_network_shards",
            400,
            "Unknown field `foo` inside `.shards.s`: expected one of `remotes`, `addRemotes`, "
            "`removeRemotes`",
        ),
        (
            {"foo": 1},
            "bad_request",
            400,
            "Unknown field `foo`: expected one of `remotes`, `shards`, `previousShards`, `self`, `leader`, "
            "`previousRemotes`",
        ),
    ],
)
def test_patch_errors(
    cluster: RunningCluster, enabled: None, body: Any, code: str, status: int, message: str
) -> None:
    before = httpx.get(f"{cluster.url}/network").json()
    assert_error(_patch(cluster, body), code, message, status=status)
    assert httpx.get(f"{cluster.url}/network").json() == before


def test_url_cannot_be_nulled(cluster: RunningCluster, enabled: None) -> None:
    assert _patch(cluster, {"remotes": {"r": {"url": "http://r"}}}).status_code == 200
    message = "Field `.remotes.r.url` cannot be set to `null`"
    assert_error(_patch(cluster, {"remotes": {"r": {"url": None}}}), "invalid_network_url", message)
    assert _patch(cluster, {"remotes": {"r": None}}).status_code == 200


def test_network_control_is_enterprise_only(cluster: RunningCluster, enabled: None) -> None:
    url = f"{cluster.url}/network/control"
    body = {
        "origin": {"remoteName": "a", "taskUid": 1},
        "message": {"type": "exportNoIndexForRemote", "remote": "a"},
    }
    message = "Meilisearch Enterprise Edition is required to call this route"
    assert_error(httpx.post(url, json=body), "requires_enterprise_edition", message, status=451)
    assert_error(httpx.post(url, json={}), "bad_request", "Missing field `origin`")


def test_network_control_flag_off(cluster: RunningCluster) -> None:
    body = {
        "origin": {"remoteName": "a", "taskUid": 1},
        "message": {"type": "exportNoIndexForRemote", "remote": "a"},
    }
    message = (
        "Using the /network/control route requires enabling the `network` experimental feature. "
        "See https://github.com/orgs/meilisearch/discussions/805"
    )
    assert_error(httpx.post(f"{cluster.url}/network/control", json=body), "feature_not_enabled", message)
