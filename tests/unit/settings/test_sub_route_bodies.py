"""Sub-route bodies: the body is the setting's value itself, so error paths start at its root."""

from __future__ import annotations

from typing import Any

import pytest

from common.errors import ApiError
from common.settings import SETTINGS_KEYS, SUB_ROUTES, SubRoute, reset_all, validate_setting


def _error(key: str, body: Any) -> ApiError:
    with pytest.raises(ApiError) as caught:
        validate_setting(key, body)
    return caught.value


@pytest.mark.parametrize(
    ("key", "body", "message"),
    [
        ("stopWords", "doggo", 'Invalid value type: expected an array, but found a string: `"doggo"`'),
        (
            "rankingRules",
            ["typos"],
            "Invalid value at `[0]`: `typos` ranking rule is invalid. Valid ranking "
            "rules are words, typo, sort, proximity, attribute, exactness and custom ranking rules.",
        ),
        ("distinctAttribute", 3, "Invalid value type: expected a string, but found a positive integer: `3`"),
        (
            "searchCutoffMs",
            "100",
            'Invalid value type: expected a positive integer, but found a string: `"100"`',
        ),
        ("proximityPrecision", "x", "Unknown value `x`: expected one of `byWord`, `byAttribute`"),
        (
            "typoTolerance",
            {"foo": 1},
            "Unknown field `foo`: expected one of `enabled`, `minWordSizeForTypos`, "
            "`disableOnWords`, `disableOnAttributes`, `disableOnNumbers`",
        ),
        (
            "pagination",
            {"maxTotalHits": 0},
            "Invalid value at `.maxTotalHits`: a non-zero integer value lower "
            "than `18446744073709551615` was expected, but found a zero",
        ),
        ("faceting", [], "Invalid value type: expected an object, but found an array: `[]`"),
        (
            "embedders",
            {"e": 1},
            "Invalid value type at `.e`: expected an object, but found a positive integer: `1`",
        ),
        ("facetSearch", "true", 'Invalid value type: expected a boolean, but found a string: `"true"`'),
    ],
)
def test_sub_route_errors_use_root_relative_paths(key: str, body: Any, message: str) -> None:
    code = "invalid_settings_" + "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
    error = _error(key, body)
    assert (error.code, error.message) == (code, message)


@pytest.mark.parametrize("route", SUB_ROUTES, ids=lambda route: route.path)
def test_every_sub_route_resets_with_null(route: SubRoute) -> None:
    assert validate_setting(route.key, None) == {route.key: None}


def test_sub_route_typo_tolerance_checks_both_sizes_at_its_root() -> None:
    error = _error("typoTolerance", {"minWordSizeForTypos": {"oneTypo": 9, "twoTypos": 1}})
    assert error.code == "invalid_settings_typo_tolerance"
    assert error.message.startswith("Invalid value at `.minWordSizeForTypos`: `minWordSizeForTypos` setting")


def test_reset_all_names_every_setting() -> None:
    """The 20, ``foreignKeys`` after ``sortableAttributes`` and ``chat`` last, as the reference's details."""
    keys = list(SETTINGS_KEYS)
    assert reset_all() == dict.fromkeys([*keys[:4], "foreignKeys", *keys[4:], "chat"])
    assert list(reset_all()) == [*keys[:4], "foreignKeys", *keys[4:], "chat"]


def test_sub_routes_cover_every_setting_with_the_contract_verbs() -> None:
    assert [route.key for route in SUB_ROUTES] == list(SETTINGS_KEYS)
    patched = {route.path for route in SUB_ROUTES if route.verb == "PATCH"}
    assert patched == {"typo-tolerance", "faceting", "pagination", "embedders"}
    assert {route.verb for route in SUB_ROUTES} == {"PUT", "PATCH"}


def test_sub_route_values_are_normalised_like_whole_settings() -> None:
    assert validate_setting("sortableAttributes", ["b", "a", "b"]) == {"sortableAttributes": ["a", "b"]}
    assert validate_setting("displayedAttributes", ["a", "*"]) == {"displayedAttributes": ["*"]}
    assert validate_setting("typoTolerance", {"disableOnAttributes": ["z", "a"]}) == {
        "typoTolerance": {"disableOnAttributes": ["a", "z"]}
    }
