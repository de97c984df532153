"""Tenant tokens (core.md §3.8) made by the official client, and hand-made ones for the error cases."""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import jwt
import meilisearch
import pytest
from meilisearch.errors import MeilisearchApiError

from tests.support.auth import MASTER_KEY, bearer, create_key, secured_cluster
from tests.support.cluster import RunningCluster

_DOCS = [{"id": 1, "title": "red apple", "genre": "fruit"}, {"id": 2, "title": "red car", "genre": "car"}]


@pytest.fixture(scope="module")
def secured() -> Iterator[RunningCluster]:
    with secured_cluster() as cluster:
        admin = meilisearch.Client(cluster.url, MASTER_KEY)
        for uid in ("movies", "books"):
            admin.wait_for_task(admin.index(uid).add_documents(_DOCS).task_uid)
        yield cluster


@pytest.fixture(scope="module")
def parent(secured: RunningCluster) -> dict[str, Any]:
    """A search key on both indexes: the tokens' signing key."""
    return create_key(secured, actions=["search"], indexes=["movies", "books"])


def _token(cluster: RunningCluster, parent: dict[str, Any], rules: Any, **kwargs: Any) -> str:
    client = meilisearch.Client(cluster.url, MASTER_KEY)
    token: str = client.generate_tenant_token(parent["uid"], rules, api_key=parent["key"], **kwargs)
    return token


def _search(cluster: RunningCluster, token: str, index: str, body: Any = None) -> httpx.Response:
    return httpx.post(
        f"{cluster.url}/indexes/{index}/search", json=body or {"q": "red"}, headers=bearer(token)
    )


def _refusal(response: httpx.Response) -> str:
    assert response.status_code == 403, response.text
    error = response.json()
    assert (error["code"], error["type"]) == ("invalid_api_key", "auth")
    message: str = error["message"]
    return message


def test_a_token_searches_the_indexes_of_its_rules(secured: RunningCluster, parent: dict[str, Any]) -> None:
    token = _token(secured, parent, ["movies"])
    hits = meilisearch.Client(secured.url, token).index("movies").search("red")["hits"]
    assert {hit["id"] for hit in hits} == {1, 2}
    with pytest.raises(MeilisearchApiError) as refused:
        meilisearch.Client(secured.url, token).index("books").search("red")
    assert refused.value.code == "invalid_api_key"
    assert refused.value.message.startswith(  # the client appends a hint of its own
        'The provided tenant token cannot acces the index `books`, allowed indexes are ["movies"].'
    )


def test_object_rules_and_wildcards(secured: RunningCluster, parent: dict[str, Any]) -> None:
    for rules in ({"movies": None}, {"*": None}, ["mov*"], {"mov*": {}}):
        assert _search(secured, _token(secured, parent, rules), "movies").status_code == 200, rules
    assert _search(secured, _token(secured, parent, {"*": None}), "books").status_code == 200


def test_get_search_and_multi_search_follow_the_rules(
    secured: RunningCluster, parent: dict[str, Any]
) -> None:
    token = _token(secured, parent, ["movies"])
    assert httpx.get(f"{secured.url}/indexes/movies/search?q=red", headers=bearer(token)).status_code == 200
    queries = {"queries": [{"indexUid": "movies", "q": "red"}, {"indexUid": "books", "q": "red"}]}
    response = httpx.post(f"{secured.url}/multi-search", json=queries, headers=bearer(token))
    assert _refusal(response) == "Inside `.queries[1]`: The provided API key is invalid."
    allowed = {"queries": [{"indexUid": "movies", "q": "red"}]}
    results = httpx.post(f"{secured.url}/multi-search", json=allowed, headers=bearer(token)).json()["results"]
    assert [r["indexUid"] for r in results] == ["movies"]


def test_a_token_is_refused_outside_search_routes(secured: RunningCluster, parent: dict[str, Any]) -> None:
    token = _token(secured, parent, ["*"])
    for method, path in [("GET", "/indexes/movies/documents"), ("GET", "/indexes"), ("GET", "/version")]:
        response = httpx.request(method, f"{secured.url}{path}", headers=bearer(token))
        assert _refusal(response) == "The provided API key is invalid."


def test_the_parent_key_bounds_the_rules(secured: RunningCluster) -> None:
    narrow = create_key(secured, actions=["search"], indexes=["movies"])
    token = _token(secured, narrow, ["*"])
    assert _search(secured, token, "movies").status_code == 200
    assert _refusal(_search(secured, token, "books")) == (
        "The API key used to generate this tenant token cannot acces the index `books`."
    )
    no_search = create_key(secured, actions=["documents.get"], indexes=["*"])
    assert _refusal(_search(secured, _token(secured, no_search, ["*"]), "movies")) == (
        "The provided API key is invalid."
    )


def test_tampered_tokens_fail_signature(secured: RunningCluster, parent: dict[str, Any]) -> None:
    token = _token(secured, parent, ["movies"])
    header, payload, signature = token.split(".")
    claims = base64.urlsafe_b64decode(payload + "==").replace(b'"movies"', b'"*"')
    forged = base64.urlsafe_b64encode(claims).rstrip(b"=").decode()
    message = "Could not decode tenant token, InvalidSignature."
    assert _refusal(_search(secured, f"{header}.{forged}.{signature}", "books")) == message
    other = create_key(secured, actions=["search"], indexes=["*"])
    wrong_secret = jwt.encode({"apiKeyUid": parent["uid"], "searchRules": ["*"]}, other["key"], "HS256")
    assert _refusal(_search(secured, wrong_secret, "movies")) == message


def test_expired_tokens_are_refused(secured: RunningCluster, parent: dict[str, Any]) -> None:
    token = _token(secured, parent, ["*"], expires_at=datetime.now(UTC) + timedelta(seconds=1))
    assert _search(secured, token, "movies").status_code == 200
    time.sleep(2.1)
    message = _refusal(_search(secured, token, "movies"))
    assert re.fullmatch(r"Tenant token expired\. Was valid up to `\d+` and we're now `\d+`\.", message)


@pytest.mark.parametrize(
    ("rules", "index"),
    [(["movies"], "movies"), (["movies"], "books"), (["*"], "outside-the-parent-key")],
)
def test_expiry_is_checked_before_the_indexes(
    secured: RunningCluster, parent: dict[str, Any], rules: list[str], index: str
) -> None:
    expired = int(time.time()) - 100
    claims = {"apiKeyUid": parent["uid"], "searchRules": rules, "exp": expired}
    token = jwt.encode(claims, parent["key"], algorithm="HS256")
    before = int(time.time())
    message = _refusal(_search(secured, token, index))
    match = re.fullmatch(r"Tenant token expired\. Was valid up to `(\d+)` and we're now `(\d+)`\.", message)
    assert match is not None, message
    assert int(match[1]) == expired and before <= int(match[2]) <= int(time.time())
    queries = {"queries": [{"indexUid": index, "q": "red"}]}
    multi = httpx.post(f"{secured.url}/multi-search", json=queries, headers=bearer(token))
    assert _refusal(multi).startswith("Tenant token expired.")


def test_tokens_of_a_deleted_key_are_revoked(secured: RunningCluster) -> None:
    doomed = create_key(secured, actions=["search"], indexes=["*"])
    token = _token(secured, doomed, ["*"])
    assert _search(secured, token, "movies").status_code == 200
    assert httpx.delete(f"{secured.url}/keys/{doomed['uid']}", headers=bearer(MASTER_KEY)).status_code == 204
    assert _refusal(_search(secured, token, "movies")) == "The provided API key is invalid."


@pytest.mark.parametrize("algorithm", ["HS256", "HS384", "HS512"])
def test_hmac_algorithms(secured: RunningCluster, parent: dict[str, Any], algorithm: str) -> None:
    token = jwt.encode({"apiKeyUid": parent["uid"], "searchRules": ["*"]}, parent["key"], algorithm)
    assert _search(secured, token, "movies").status_code == 200


def test_malformed_tokens(secured: RunningCluster, parent: dict[str, Any]) -> None:
    unsigned = jwt.encode({"apiKeyUid": parent["uid"], "searchRules": ["*"]}, None, "none")
    assert (
        _refusal(_search(secured, unsigned, "movies")) == "Could not decode tenant token, InvalidAlgorithm."
    )
    claims = {"apiKeyUid": parent["uid"]}
    no_rules = jwt.encode(claims, parent["key"], "HS256")
    column = len(json.dumps(claims, separators=(",", ":")))  # serde stops at the end of the payload
    assert _refusal(_search(secured, no_rules, "movies")) == (
        f"Could not decode tenant token, JSON error: missing field `searchRules` at line 1 column {column}."
    )
    bad_rules = jwt.encode({"apiKeyUid": parent["uid"], "searchRules": 3}, parent["key"], "HS256")
    assert "did not match any variant of untagged enum SearchRules" in _refusal(
        _search(secured, bad_rules, "movies")
    )
    assert _refusal(_search(secured, "a.b.c", "movies")) == "The provided API key is invalid."


def test_rule_filters_restrict_the_results(secured: RunningCluster, parent: dict[str, Any]) -> None:
    admin = meilisearch.Client(secured.url, MASTER_KEY)
    admin.wait_for_task(admin.index("movies").update_filterable_attributes(["genre", "id"]).task_uid)
    token = _token(secured, parent, {"movies": {"filter": "genre = fruit"}})
    hits = _search(secured, token, "movies").json()["hits"]
    assert [hit["id"] for hit in hits] == [1]
    # The request's filter is AND-ed with the rule's: nothing is both a car and a fruit.
    assert _search(secured, token, "movies", {"q": "red", "filter": "genre = car"}).json()["hits"] == []
    assert _search(secured, token, "movies", {"q": "red", "filter": ["id = 1"]}).json()["hits"][0]["id"] == 1


def test_unreadable_and_deeply_nested_tokens_are_refused_not_500(
    secured: RunningCluster, parent: dict[str, Any]
) -> None:
    """Issue 27's parser fuzzing: a payload segment with a non-ASCII character raised ValueError out of
    base64 (500); rules nested 900 deep (Python's json reads them, orjson could not) are refused."""
    header = {"Authorization": b"Bearer eyJhbGciOiJIUzI1NiJ9.\xff.x"}
    response = httpx.post(f"{secured.url}/indexes/movies/search", json={}, headers=header)
    assert _refusal(response) == "The provided API key is invalid."
    rules = b'{"movies":{"filter":' + b"[" * 900 + b'"genre = car"' + b"]" * 900 + b"}}"
    claims = b'{"apiKeyUid":"' + parent["uid"].encode() + b'","searchRules":' + rules + b"}"
    deep = jwt.api_jws.encode(claims, parent["key"], algorithm="HS256")
    assert _refusal(_search(secured, deep, "movies")).startswith(
        "Could not decode tenant token, JSON error: recursion limit exceeded at line 1 column"
    )
