"""The ``/webhooks`` routes (core.md §3.14): the webhook object, the launch-option webhook, limits,
errors in the reference's words, API-key actions, durability across a ``kill -9`` of the scheduler."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import meilisearch
import pytest

from tests.support.auth import MASTER_KEY, bearer, create_key, secured_cluster
from tests.support.cluster import RunningCluster

NIL = "00000000-0000-0000-0000-000000000000"
LAUNCH_URL = "http://127.0.0.1:9/launch?x=1&y=2"
MASTER = bearer(MASTER_KEY)


@pytest.fixture(scope="module")
def secured() -> Iterator[RunningCluster]:
    options = ("--task-webhook-url", LAUNCH_URL)
    with secured_cluster(*options, "--task-webhook-authorization-header", "Bearer " + "t" * 36) as cluster:
        yield cluster


@pytest.fixture(autouse=True)
def no_webhooks(secured: RunningCluster) -> Iterator[None]:
    yield
    for webhook in _list(secured):
        if webhook["isEditable"]:
            httpx.delete(f"{secured.url}/webhooks/{webhook['uuid']}", headers=MASTER).raise_for_status()


def _list(cluster: RunningCluster) -> list[dict[str, Any]]:
    response = httpx.get(f"{cluster.url}/webhooks", headers=MASTER)
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    return results


def _create(cluster: RunningCluster, body: Any) -> httpx.Response:
    return httpx.post(f"{cluster.url}/webhooks", json=body, headers=MASTER)


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()
    assert error["code"] == code and error["type"] == "invalid_request", error
    assert error["link"] == f"https://docs.meilisearch.com/errors#{code}"
    message: str = error["message"]
    return message


def test_launch_option_webhook_is_listed_first_and_not_editable(secured: RunningCluster) -> None:
    launch = {
        "uuid": NIL,
        "isEditable": False,
        "url": LAUNCH_URL,
        "headers": {"Authorization": "Bearer tttttXXXXXX..."},
    }
    assert _list(secured) == [launch]
    assert httpx.get(f"{secured.url}/webhooks/{NIL}", headers=MASTER).json() == launch
    created = _create(secured, {"url": "https://example.com/hook"}).json()
    assert _list(secured) == [launch, created]
    for method in ("PATCH", "DELETE"):
        response = httpx.request(method, f"{secured.url}/webhooks/{NIL}", json={}, headers=MASTER)
        assert _error(response, 400, "immutable_webhook") == (
            f"Webhook `{NIL}` is immutable. The webhook defined from the command line cannot be modified "
            "using the API."
        )


def test_create_get_update_delete_through_the_client(secured: RunningCluster) -> None:
    client = meilisearch.Client(secured.url, MASTER_KEY)
    created = client.create_webhook(
        {"url": "https://example.com/a?b=c", "headers": {"X-Z": "1", "Authorization": "Bearer short"}}
    )
    raw = httpx.get(f"{secured.url}/webhooks/{created.uuid}", headers=MASTER).json()
    assert list(raw) == ["uuid", "isEditable", "url", "headers"]
    assert raw == {
        "uuid": created.uuid,
        "isEditable": True,
        "url": "https://example.com/a?b=c",
        "headers": {"Authorization": "Bearer XXX...", "X-Z": "1"},  # sorted by name, secret masked
    }
    assert len(created.uuid) == 36 and created.uuid[14] == "4"  # a version 4 uuid
    updated = client.update_webhook(created.uuid, {"headers": {"X-Z": None, "x-a": "2"}})
    assert updated.headers == {"Authorization": "Bearer XXX...", "x-a": "2"}
    updated = client.update_webhook(created.uuid, {"url": "https://example.org/"})
    assert (updated.url, updated.headers) == (
        "https://example.org/",
        {"Authorization": "Bearer XXX...", "x-a": "2"},
    )
    cleared = httpx.patch(f"{secured.url}/webhooks/{created.uuid}", json={"headers": None}, headers=MASTER)
    assert cleared.status_code == 200 and cleared.json()["headers"] == {}
    assert [w.uuid for w in client.get_webhooks().results] == [NIL, created.uuid]
    # The path takes the reference's other UUID forms too.
    simple = created.uuid.replace("-", "").upper()
    assert httpx.get(f"{secured.url}/webhooks/{simple}", headers=MASTER).json()["uuid"] == created.uuid
    response = httpx.delete(f"{secured.url}/webhooks/{created.uuid}", headers=MASTER)
    assert response.status_code == 204 and response.content == b""
    response = httpx.get(f"{secured.url}/webhooks/{created.uuid}", headers=MASTER)
    assert _error(response, 404, "webhook_not_found") == f"Webhook `{created.uuid}` not found."
    response = httpx.delete(f"{secured.url}/webhooks/{created.uuid}", headers=MASTER)
    assert _error(response, 404, "webhook_not_found") == f"Webhook `{created.uuid}` not found."


def test_authorization_values_are_masked_as_the_reference_does(secured: RunningCluster) -> None:
    headers = {
        "authorization": "Basic abcdefghijkl",
        "Proxy-Authorization": "Bearer abcdefghijklmnopqrstuvwxyz",
    }
    created = _create(secured, {"url": "https://example.com", "headers": headers}).json()
    assert created["headers"] == {
        "Proxy-Authorization": "Bearer abcdefghijklmnopqrstuvwxyz",
        "authorization": "BaXXXX...",
    }
    patched = httpx.patch(
        f"{secured.url}/webhooks/{created['uuid']}",
        json={"headers": {"authorization": "Bearer abcdefghijklmnopqrstuvwxyz"}},
        headers=MASTER,
    )
    assert patched.json()["headers"]["authorization"] == "Bearer abcXXXXX..."


def test_signing_secret_is_write_only(secured: RunningCluster) -> None:
    created = _create(secured, {"url": "https://example.com", "signingSecret": "0123456789abcdefghij"}).json()
    assert created["signingSecret"] == "012XXXXX..."
    patched = httpx.patch(
        f"{secured.url}/webhooks/{created['uuid']}", json={"signingSecret": None}, headers=MASTER
    ).json()
    assert "signingSecret" not in patched
    response = _create(secured, {"url": "https://example.com", "signingSecret": ""})
    assert _error(response, 400, "bad_request") == (
        "Invalid value at `.signingSecret`: the signing secret must not be empty"
    )


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        ({"url": 1}, "invalid_webhook_url",
         "Invalid value type at `.url`: expected a string, but found a positive integer: `1`"),
        ({"url": "foo"}, "invalid_webhook_url", "Invalid URL `foo`: relative URL without a base"),
        ({"url": "http://"}, "invalid_webhook_url", "Invalid URL `http://`: empty host"),
        ({"url": "http://a.com:99999"}, "invalid_webhook_url",
         "Invalid URL `http://a.com:99999`: invalid port number"),
        ({"url": "http://a b.com"}, "invalid_webhook_url",
         "Invalid URL `http://a b.com`: invalid international domain name"),
        ({"url": "http://[::1"}, "invalid_webhook_url", "Invalid URL `http://[::1`: invalid IPv6 address"),
        ({"url": "http://999.1.1.1"}, "invalid_webhook_url",
         "Invalid URL `http://999.1.1.1`: invalid IPv4 address"),
        ({"url": "http://a.com", "headers": []}, "invalid_webhook_headers",
         "Invalid value type at `.headers`: expected an object, but found an array: `[]`"),
        ({"url": "http://a.com", "headers": {"a": 1}}, "invalid_webhook_headers",
         "Invalid value type at `.headers.a`: expected a string, but found a positive integer: `1`"),
        ({"url": "foo", "headers": {"a b": "x"}}, "invalid_webhook_headers",
         "Invalid header name `a b`: invalid HTTP header name"),
        ({"url": "http://a.com", "headers": {"a": "1\n"}}, "invalid_webhook_headers",
         "Invalid header value `a`: failed to parse header value"),
        ({"url": "http://a.com", "foo": 1}, "bad_request",
         "Unknown field `foo`: expected one of `url`, `headers`, `signingSecret`"),
        ({"url": "http://a.com", "uuid": NIL}, "immutable_webhook_uuid",
         "Immutable field `uuid`: expected one of `url`, `headers`, `signingSecret`"),
        ({"url": "http://a.com", "isEditable": False}, "immutable_webhook_is_editable",
         "Immutable field `isEditable`: expected one of `url`, `headers`, `signingSecret`"),
        ([], "bad_request", "Invalid value type: expected an object, but found an array: `[]`"),
    ],
)  # fmt: skip
def test_creation_errors(secured: RunningCluster, body: Any, code: str, message: str) -> None:
    assert _error(_create(secured, body), 400, code) == message
    assert len(_list(secured)) == 1


def test_accepted_urls_and_headers_are_kept_as_given(secured: RunningCluster) -> None:
    for url in (
        "ftp://x.com",
        "mailto:x@y.com",
        "HTTP://A.COM/X?Y#frag",
        "http://0x7f.1",
        "https://münchen.de",
    ):
        assert _create(secured, {"url": url}).json()["url"] == url
    created = _create(secured, {"url": "http://a.com", "headers": {"a": None, "OK": "é", "ok": "\t"}}).json()
    assert created["headers"] == {"OK": "é", "a": "", "ok": "\t"}


def test_missing_url_names_the_webhook(secured: RunningCluster) -> None:
    message = _error(_create(secured, {"headers": {"a b": "x"}}), 400, "invalid_webhook_url")
    assert message.startswith("The URL for the webhook `") and message.endswith("` is missing.")
    created = _create(secured, {"url": "http://a.com"}).json()
    response = httpx.patch(f"{secured.url}/webhooks/{created['uuid']}", json={"url": None}, headers=MASTER)
    assert (
        _error(response, 400, "invalid_webhook_url")
        == f"The URL for the webhook `{created['uuid']}` is missing."
    )


def test_limits(secured: RunningCluster) -> None:
    too_many = {f"h{i}": "v" for i in range(201)}
    message = _error(
        _create(secured, {"url": "http://a.com", "headers": too_many}), 400, "invalid_webhook_headers"
    )
    assert message.startswith("Too many headers for the webhook `") and message.endswith(
        "`. Please limit the number of headers to 200. Hint: To remove an already defined header set its "
        "value to `null`"
    )
    full = _create(secured, {"url": "http://a.com", "headers": {f"h{i}": "v" for i in range(200)}}).json()
    path = f"{secured.url}/webhooks/{full['uuid']}"
    response = httpx.patch(path, json={"headers": {"extra": "v"}}, headers=MASTER)
    assert _error(response, 400, "invalid_webhook_headers").startswith(
        f"Too many headers for the webhook `{full['uuid']}`"
    )
    swapped = httpx.patch(path, json={"headers": {"h0": None, "extra": "v"}}, headers=MASTER)
    assert swapped.status_code == 200 and len(swapped.json()["headers"]) == 200
    for index in range(19):
        assert _create(secured, {"url": f"http://x{index}.com"}).status_code == 201
    response = _create(secured, {"url": "foo"})  # the count is checked first
    assert _error(response, 400, "invalid_webhooks") == (
        "Defining too many webhooks would crush the server. Please limit the number of webhooks to 20. You "
        "may use a third-party proxy server to dispatch events to more than 20 endpoints."
    )
    assert len(_list(secured)) == 21  # 20 runtime webhooks, and the launch-option one


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("xyz", "Invalid UUID: invalid character: found `x` at 0"),
        ("abc", "Invalid UUID: invalid length: found 3"),
        ("00000000-0000-0000-0000-00000000000",
         "Invalid UUID: invalid group length in group 4: expected 12, found 11"),
        ("0000000000000000-000000000000000", "Invalid UUID: invalid group count: expected 5, found 2"),
        ("{xyz}", "Invalid UUID: invalid character: found `x` at 1"),
    ],
)  # fmt: skip
def test_path_uuid_errors(secured: RunningCluster, path: str, message: str) -> None:
    for method in ("GET", "PATCH", "DELETE"):
        response = httpx.request(method, f"{secured.url}/webhooks/{path}", json={}, headers=MASTER)
        assert _error(response, 400, "invalid_webhook_uuid") == message


def test_every_route_needs_its_action(secured: RunningCluster) -> None:
    created = _create(secured, {"url": "http://a.com"}).json()
    one = f"{secured.url}/webhooks/{created['uuid']}"
    calls = [
        ("GET", f"{secured.url}/webhooks", None, "webhooks.get", 200),
        ("POST", f"{secured.url}/webhooks", {"url": "http://b.com"}, "webhooks.create", 201),
        ("GET", one, None, "webhooks.get", 200),
        ("PATCH", one, {"url": "http://c.com"}, "webhooks.update", 200),
        ("DELETE", one, None, "webhooks.delete", 204),
    ]
    everything = ("webhooks.get", "webhooks.create", "webhooks.update", "webhooks.delete")
    for method, url, body, action, status in calls:
        assert httpx.request(method, url, json=body).status_code == 401
        wrong = create_key(secured, actions=[a for a in everything if a != action], indexes=["*"])["key"]
        response = httpx.request(method, url, json=body, headers=bearer(wrong))
        assert response.status_code == 403 and response.json()["code"] == "invalid_api_key", (
            action,
            response.text,
        )
        right = create_key(secured, actions=[action], indexes=["*"])["key"]
        response = httpx.request(method, url, json=body, headers=bearer(right))
        assert response.status_code == status, (action, response.text)
    for actions in (["webhooks.*"], ["*.get"]):
        key = create_key(secured, actions=actions, indexes=["*"])["key"]
        assert httpx.get(f"{secured.url}/webhooks", headers=bearer(key)).status_code == 200
    key = create_key(secured, actions=["webhooks.*"], indexes=["*"])["key"]
    assert _create(secured, {"url": "http://d.com"}).status_code == 201
    response = httpx.post(f"{secured.url}/webhooks", json={"url": "http://e.com"}, headers=bearer(key))
    assert response.status_code == 201


def test_webhooks_survive_a_scheduler_kill(secured: RunningCluster) -> None:
    created = _create(
        secured, {"url": "http://a.com/x", "headers": {"X": "1"}, "signingSecret": "s" * 12}
    ).json()
    pid = secured.kill_backend("scheduler")
    secured.wait_replaced("scheduler", pid)
    assert _list(secured)[1] == created
