"""Issue 27's hostile inputs through the real cluster: each is refused with the contract's error, or
accepted, never a 5xx, a crash or a hang. The 100 MB NDJSON line is in ``python -m bench.fuzz_parsers
--hostile`` (uploading it costs ~20 s)."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from tests.support.cluster import RunningCluster
from tests.support.crash.api import wait_task

INDEX = "hostile"
JSON = {"content-type": "application/json"}
NDJSON = {"content-type": "application/x-ndjson"}


@pytest.fixture(scope="module")
def client(cluster: RunningCluster) -> httpx.Client:
    client = httpx.Client(base_url=cluster.url, timeout=60)
    task = client.post(f"/indexes/{INDEX}/documents", json=[{"id": 1, "title": "a"}]).json()
    assert wait_task(client, task["taskUid"])["status"] == "succeeded"
    return client


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text[:500]
    error: dict[str, Any] = response.json()
    assert error["code"] == code
    assert error["link"] == f"https://docs.meilisearch.com/errors#{code}"
    return error


def nested(depth: int, inner: bytes = b"") -> bytes:
    return b"[" * depth + inner + b"]" * depth


@pytest.mark.parametrize("depth", [300, 100_000])
def test_a_deeply_nested_filter_is_a_malformed_body(client: httpx.Client, depth: int) -> None:
    """serde_json's recursion limit (the 128th container), as the reference: orjson read up to 1,024
    levels and the gateway failed 500 re-encoding the filter for the shards (past 254)."""
    body = b'{"filter":' + nested(depth, b'"title = a"') + b"}"
    error = assert_error(
        client.post(f"/indexes/{INDEX}/search", content=body, headers=JSON), 400, "malformed_payload"
    )
    assert error["message"] == (
        "The json payload provided is malformed. `recursion limit exceeded at line 1 column 137`."
    )


def test_nesting_below_the_limit_reaches_the_filter_check(client: httpx.Client) -> None:
    body = b'{"filter":' + nested(126, b'"title = a"') + b"}"
    response = client.post(f"/indexes/{INDEX}/search", content=body, headers=JSON)
    assert_error(response, 400, "invalid_search_filter")


@pytest.mark.parametrize("depth", [300, 100_000])
def test_a_deeply_nested_document_is_a_malformed_payload(client: httpx.Client, depth: int) -> None:
    """Was accepted, then its task failed `internal` (the scheduler could not encode it)."""
    document = b'{"id":2,"deep":' + nested(depth) + b"}"
    error = assert_error(
        client.post(f"/indexes/{INDEX}/documents", content=document, headers=JSON), 400, "malformed_payload"
    )
    assert error["message"] == (
        "The `json` payload provided is malformed. `Couldn't serialize document value: recursion limit"
        " exceeded at line 1 column 142`."
    )
    lines = b'{"id":3}\n\n' + document + b"\n"
    error = assert_error(
        client.post(f"/indexes/{INDEX}/documents", content=lines, headers=NDJSON), 400, "malformed_payload"
    )
    assert "recursion limit exceeded at line 3 column 142" in error["message"]


def test_a_document_nested_below_the_limit_is_indexed(client: httpx.Client) -> None:
    document = b'{"id":4,"deep":' + nested(126) + b"}"
    task = client.post(f"/indexes/{INDEX}/documents", content=document, headers=JSON).json()
    assert wait_task(client, task["taskUid"])["status"] == "succeeded"


def test_a_document_with_100k_fields_fails_its_task_with_the_contract_error(client: httpx.Client) -> None:
    """core.md §3.3: more than 65,535 fields is `max_fields_limit_exceeded`; shards stored field ids in
    16 bits and the task failed `internal` (struct.error)."""
    document = {"id": 5, **{f"f{i}": i for i in range(100_000)}}
    task = client.post(f"/indexes/{INDEX}/documents", content=orjson.dumps(document), headers=JSON).json()
    finished = wait_task(client, task["taskUid"])
    assert finished["status"] == "failed"
    assert finished["error"]["code"] == "max_fields_limit_exceeded"
    assert finished["error"]["type"] == "invalid_request"
    assert (
        finished["error"]["message"] == f"Index `{INDEX}`: A document cannot contain more than 65,535 fields."
    )
    assert client.get(f"/indexes/{INDEX}/documents/1").status_code == 200


HOSTILE: list[tuple[str, str, str, dict[str, Any], set[int]]] = [
    ("invalid UTF-8 body", "POST", "/search", {"content": b'{"q":"\xff\xfe"}', "headers": JSON}, {400}),
    (
        "invalid UTF-8 document",
        "POST",
        "/documents",
        {"content": b'{"id":6,"a":"\xff"}', "headers": JSON},
        {400},
    ),
    (
        "invalid UTF-8 CSV",
        "POST",
        "/documents",
        {"content": b"id,a\n7,\xff\n", "headers": {"content-type": "text/csv"}},
        {400},
    ),
    ("invalid UTF-8 query string", "GET", "/search?q=%ff%fe&filter=%ff", {}, {400}),
    ("NUL in query string", "GET", "/search?q=a%00b&filter=a%3D%00", {}, {400}),
    (
        "NUL in JSON strings",
        "POST",
        "/search",
        {"json": {"q": "a\x00b", "filter": "title = '\x00'"}},
        {200, 400},
    ),
    ("NUL after the JSON", "POST", "/search", {"content": b'{"q":"a"}\x00', "headers": JSON}, {400}),
    ("NUL in a document", "POST", "/documents", {"json": {"id": 8, "a\x00": "b\x00"}}, {202}),
    (
        "NUL in CSV",
        "POST",
        "/documents",
        {"content": b"id,a\n9,a\x00b\n", "headers": {"content-type": "text/csv"}},
        {202},
    ),
    (
        "duplicate keys in a search",
        "POST",
        "/search",
        {"content": b'{"q":"a","q":"b"}', "headers": JSON},
        {200},
    ),
    (
        "duplicate keys in a document",
        "POST",
        "/documents",
        {"content": b'{"id":10,"id":11}', "headers": JSON},
        {202},
    ),
    ("10 MB query", "POST", "/search", {"json": {"q": "x" * 10_000_000}}, {200}),
    ("10 MB filter", "POST", "/search", {"json": {"filter": "title = " + "x" * 10_000_000}}, {200, 400}),
    # A quoted value ran the filter lexer's regex out of memory (a backtracking frame per character).
    (
        "10 MB quoted filter value",
        "POST",
        "/search",
        {"json": {"filter": "title = '" + "x" * 10_000_000 + "'"}},
        {200, 400},
    ),
    (
        "10^5 nested parentheses",
        "POST",
        "/search",
        {"json": {"filter": "(" * 100_000 + "a = 1" + ")" * 100_000}},
        {400},
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "request_args", "statuses"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE]
)
def test_hostile_input_is_answered_within_the_contract(
    client: httpx.Client, method: str, path: str, request_args: dict[str, Any], statuses: set[int]
) -> None:
    response = client.request(method, f"/indexes/{INDEX}{path}", **request_args)
    assert response.status_code in statuses, response.text[:500]
    if response.status_code == 202:
        assert wait_task(client, response.json()["taskUid"])["status"] == "succeeded"
    elif response.status_code == 400:
        assert set(response.json()) == {"message", "code", "type", "link"}
        assert response.json()["type"] == "invalid_request"
