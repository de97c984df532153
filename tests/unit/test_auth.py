"""The gateway's authorisation rules without a cluster: actions, patterns, rules, the guard."""

from __future__ import annotations

import time

import jwt
import pytest

from common.errors import ApiError
from common.index_patterns import IndexPatterns, is_valid_pattern
from gateway.auth.access import FULL_ACCESS, TenantAccess, fuse_filters
from gateway.auth.actions import GLOBAL_ONLY, granted
from gateway.auth.guard import Guard, bearer_token
from gateway.auth.keyring import KeyRing
from gateway.auth.tenant import SearchRules

MASTER = "unit-master-key-0123456789"


def _ring(**fields: object) -> tuple[KeyRing, str]:
    ring = KeyRing(MASTER)
    record = {
        "uid": "9f3c7c1e-3c1a-4f43-8d53-7a3f4b0a3e21",
        "name": None,
        "description": None,
        "actions": ["search"],
        "indexes": ["*"],
        "expiresNs": None,
        "createdNs": 1,
        "updatedNs": 1,
        **fields,
    }
    return ring, ring.put(record).key


def test_wildcards_expand_to_their_members() -> None:
    assert granted(["documents.*"]) >= {"documents.add", "documents.get", "documents.delete"}
    assert "keys.get" in granted(["*"]) and "*.get" not in granted(["*"])
    assert "keys.get" not in granted(["*.get"]) and "settings.update" not in granted(["*.get"])
    assert {"version", "keys.create", "tasks.compact"} <= GLOBAL_ONLY and "search" not in GLOBAL_ONLY


def test_index_patterns() -> None:
    patterns = IndexPatterns(["movies", "prod_*"])
    assert patterns.allows("movies") and patterns.allows("prod_") and patterns.allows("prod_x")
    assert not patterns.allows("movie") and not patterns.allows("dev")
    assert IndexPatterns(["*"]).allows("anything") and not IndexPatterns([]).allows("x")
    assert [is_valid_pattern(p) for p in ("*", "a-b_1*", "a*b", "**", "", "a b")] == [
        True, True, False, False, False, False
    ]  # fmt: skip


def test_the_most_specific_rule_gives_the_filter() -> None:
    rules = SearchRules({"*": "a = 1", "mov*": "b = 2", "movies": None, "movies_fr": "c = 3"})
    assert rules.filter_for("movies") is None
    assert rules.filter_for("movies_fr") == "c = 3"
    assert rules.filter_for("movies_de") == "b = 2"
    assert rules.filter_for("books") == "a = 1"


@pytest.mark.parametrize(
    ("request_filter", "rule", "fused"),
    [
        (None, "b = 2", "b = 2"),
        ("a = 1", "b = 2", ["a = 1", "b = 2"]),
        (["a = 1", ["c = 3", "d = 4"]], ["b = 2"], ["a = 1", ["c = 3", "d = 4"], "b = 2"]),
    ],
)
def test_rule_filters_are_anded_after_the_request_filter(
    request_filter: object, rule: object, fused: object
) -> None:
    assert fuse_filters(request_filter, rule) == fused


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("Basic x", None),
        ("bearer x", None),
        ("Bearerx", None),
        ("Bearer", ""),
        ("Bearer  x ", "x"),
    ],
)
def test_bearer_token(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_guard_order_of_checks() -> None:
    ring, key = _ring(indexes=["movies"], actions=["search", "documents.get"])
    guard = Guard(MASTER, ring)
    assert guard.authorize("search", "movies", f"Bearer {MASTER}") is FULL_ACCESS
    assert guard.authorize("search", "movies", f"Bearer {key}").allows("movies")
    with pytest.raises(ApiError, match="cannot acces the index `books`"):
        guard.authorize("search", "books", f"Bearer {key}")
    with pytest.raises(ApiError, match="The provided API key is invalid"):
        guard.authorize("settings.get", "movies", f"Bearer {key}")
    with pytest.raises(ApiError) as missing:
        guard.authorize("search", "movies", None)
    assert missing.value.code == "missing_authorization_header"


def test_guard_applies_tenant_rules() -> None:
    ring, key = _ring()
    uid = "9f3c7c1e-3c1a-4f43-8d53-7a3f4b0a3e21"
    token = jwt.encode({"apiKeyUid": uid, "searchRules": {"movies": {"filter": "x = 1"}}}, key, "HS256")
    access = Guard(MASTER, ring).authorize("search", "movies", f"Bearer {token}")
    assert isinstance(access, TenantAccess)
    assert access.restrict_search("movies", {"q": "a", "filter": "y = 2"})["filter"] == ["y = 2", "x = 1"]
    expired = jwt.encode({"apiKeyUid": uid, "searchRules": ["*"], "exp": int(time.time()) - 5}, key, "HS256")
    with pytest.raises(ApiError, match="Tenant token expired"):
        Guard(MASTER, ring).authorize("search", "movies", f"Bearer {expired}")
