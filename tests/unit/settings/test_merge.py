"""PATCH semantics onto stored settings, effective settings with defaults, and secret masking."""

from __future__ import annotations

from typing import Any

import pytest

from common.errors import ApiError
from common.settings import (
    SETTINGS_KEYS,
    default_settings,
    effective_settings,
    mask_secret,
    merge_settings,
    public_settings,
    reset_all,
    update_details,
    validate_setting,
    validate_settings,
)


def _apply(*bodies: dict[str, Any]) -> dict[str, Any]:
    user: dict[str, Any] = {}
    for body in bodies:
        user = merge_settings(user, validate_settings(body))
    return user


def test_defaults_are_the_contract_table_in_order() -> None:
    settings = effective_settings({})
    assert list(settings) == [
        "displayedAttributes",
        "searchableAttributes",
        "filterableAttributes",
        "sortableAttributes",
        "rankingRules",
        "stopWords",
        "nonSeparatorTokens",
        "separatorTokens",
        "dictionary",
        "synonyms",
        "distinctAttribute",
        "proximityPrecision",
        "typoTolerance",
        "faceting",
        "pagination",
        "embedders",
        "searchCutoffMs",
        "localizedAttributes",
        "facetSearch",
        "prefixSearch",
    ]
    assert list(settings) == list(SETTINGS_KEYS)
    assert settings["rankingRules"] == [
        "words",
        "typo",
        "proximity",
        "attributeRank",
        "sort",
        "wordPosition",
        "exactness",
    ]
    assert settings["typoTolerance"] == {
        "enabled": True,
        "minWordSizeForTypos": {"oneTypo": 5, "twoTypos": 9},
        "disableOnWords": [],
        "disableOnAttributes": [],
        "disableOnNumbers": False,
    }
    assert settings["faceting"] == {"maxValuesPerFacet": 100, "sortFacetValuesBy": {"*": "alpha"}}
    assert settings["pagination"] == {"maxTotalHits": 1000}
    assert (settings["displayedAttributes"], settings["searchableAttributes"]) == (["*"], ["*"])
    assert settings["distinctAttribute"] is None and settings["searchCutoffMs"] is None
    assert (
        settings["localizedAttributes"] is None and settings["embedders"] == {} and settings["synonyms"] == {}
    )
    assert (settings["proximityPrecision"], settings["facetSearch"], settings["prefixSearch"]) == (
        "byWord",
        True,
        "indexingTime",
    )


def test_defaults_are_fresh_copies() -> None:
    first = effective_settings({})
    first["stopWords"].append("x")
    first["typoTolerance"]["minWordSizeForTypos"]["oneTypo"] = 1
    assert effective_settings({}) == default_settings()
    assert default_settings()["stopWords"] == []


def test_only_sent_fields_change() -> None:
    user = _apply({"stopWords": ["a"], "distinctAttribute": "sku"}, {"rankingRules": ["words"]})
    assert user == {"stopWords": ["a"], "distinctAttribute": "sku", "rankingRules": ["words"]}


def test_null_forgets_a_field() -> None:
    user = _apply({"stopWords": ["a"], "searchCutoffMs": 50}, {"stopWords": None})
    assert user == {"searchCutoffMs": 50}
    assert effective_settings(user)["stopWords"] == []


def test_merge_leaves_the_stored_settings_untouched() -> None:
    stored = {"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 2}}, "stopWords": ["a"]}
    merge_settings(stored, validate_settings({"typoTolerance": {"minWordSizeForTypos": {"twoTypos": 3}}}))
    assert stored == {"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 2}}, "stopWords": ["a"]}


def test_typo_tolerance_merges_sub_fields() -> None:
    user = _apply(
        {"typoTolerance": {"enabled": False, "disableOnWords": ["x"]}},
        {"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 3}}},
        {"typoTolerance": {"minWordSizeForTypos": {"twoTypos": 7}, "disableOnNumbers": True}},
    )
    assert effective_settings(user)["typoTolerance"] == {
        "enabled": False,
        "minWordSizeForTypos": {"oneTypo": 3, "twoTypos": 7},
        "disableOnWords": ["x"],
        "disableOnAttributes": [],
        "disableOnNumbers": True,
    }


def test_typo_tolerance_sub_field_null_resets_only_that_field() -> None:
    user = _apply(
        {"typoTolerance": {"enabled": False, "minWordSizeForTypos": {"oneTypo": 3, "twoTypos": 12}}},
        {"typoTolerance": {"minWordSizeForTypos": {"oneTypo": None}, "enabled": None}},
    )
    assert user == {"typoTolerance": {"minWordSizeForTypos": {"twoTypos": 12}}}
    typo = effective_settings(user)["typoTolerance"]
    assert typo["enabled"] is True and typo["minWordSizeForTypos"] == {"oneTypo": 5, "twoTypos": 12}


def test_typo_tolerance_null_resets_all_five() -> None:
    user = _apply(
        {
            "typoTolerance": {
                "enabled": False,
                "minWordSizeForTypos": {"oneTypo": 1, "twoTypos": 2},
                "disableOnWords": ["a"],
                "disableOnAttributes": ["b"],
                "disableOnNumbers": True,
            },
            "stopWords": ["s"],
        },
        {"typoTolerance": None},
    )
    assert user == {"stopWords": ["s"]}
    assert effective_settings(user)["typoTolerance"] == default_settings()["typoTolerance"]


def test_emptied_nested_objects_are_dropped() -> None:
    user = _apply({"pagination": {"maxTotalHits": 5}}, {"pagination": {"maxTotalHits": None}})
    assert user == {}
    user = _apply(
        {"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 2}}},
        {"typoTolerance": {"minWordSizeForTypos": None}},
    )
    assert user == {}


def test_min_word_sizes_are_checked_against_the_stored_other_value() -> None:
    stored = _apply({"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 2, "twoTypos": 4}}})
    with pytest.raises(ApiError) as caught:
        merge_settings(stored, validate_settings({"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 6}}}))
    assert caught.value.code == "invalid_settings_typo_tolerance"
    assert caught.value.message == (
        "Invalid value at `.typoTolerance.minWordSizeForTypos`: `minWordSizeForTypos` setting is invalid. "
        "`oneTypo` and `twoTypos` fields should be between `0` and `255`, and `twoTypos` should be greater "
        "or equals to `oneTypo` but found `oneTypo: 6` and twoTypos: 4`."
    )
    ok = merge_settings(stored, validate_settings({"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 4}}}))
    assert effective_settings(ok)["typoTolerance"]["minWordSizeForTypos"] == {"oneTypo": 4, "twoTypos": 4}


def test_min_word_sizes_are_checked_against_defaults_and_resets() -> None:
    with pytest.raises(ApiError, match="found `oneTypo: 10` and twoTypos: 9`"):
        merge_settings({}, validate_settings({"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 10}}}))
    stored = _apply({"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 3, "twoTypos": 4}}})
    with pytest.raises(ApiError, match="found `oneTypo: 5` and twoTypos: 4`"):
        merge_settings(
            stored, validate_settings({"typoTolerance": {"minWordSizeForTypos": {"oneTypo": None}}})
        )
    assert merge_settings(stored, validate_settings({"typoTolerance": None})) == {}


def test_faceting_merges_fields_but_replaces_the_sort_map() -> None:
    user = _apply(
        {"faceting": {"maxValuesPerFacet": 10, "sortFacetValuesBy": {"genre": "count", "year": "count"}}},
        {"faceting": {"sortFacetValuesBy": {"year": "alpha", "author": "count"}}},
    )
    assert effective_settings(user)["faceting"] == {
        "maxValuesPerFacet": 10,
        "sortFacetValuesBy": {"*": "alpha", "author": "count", "year": "alpha"},
    }
    user = merge_settings(user, validate_settings({"faceting": {"sortFacetValuesBy": {"*": "count"}}}))
    assert effective_settings(user)["faceting"]["sortFacetValuesBy"] == {"*": "count"}
    user = merge_settings(user, validate_settings({"faceting": {"maxValuesPerFacet": None}}))
    assert effective_settings(user)["faceting"] == {
        "maxValuesPerFacet": 100,
        "sortFacetValuesBy": {"*": "count"},
    }


_REST_TEMPLATES = {"request": {"input": "{{text}}"}, "response": {"embedding": "{{embedding}}"}}


def test_embedders_merge_by_name_and_field() -> None:
    user = _apply(
        {
            "embedders": {
                "a": {"source": "userProvided", "dimensions": 3},
                "b": {"source": "rest", "url": "http://x", "apiKey": "k", **_REST_TEMPLATES},
            }
        },
        {"embedders": {"a": {"dimensions": 4, "binaryQuantized": True}, "b": {"apiKey": None}, "c": {}}},
    )
    assert user["embedders"] == {
        "a": {"source": "userProvided", "dimensions": 4, "binaryQuantized": True},
        "b": {"source": "rest", "url": "http://x", **_REST_TEMPLATES},
        "c": {},
    }
    user = merge_settings(user, validate_settings({"embedders": {"a": None, "c": None}}))
    assert list(user["embedders"]) == ["b"]
    user = merge_settings(user, validate_settings({"embedders": {"b": None}}))
    assert "embedders" not in user
    user = merge_settings(
        _apply({"embedders": {"x": {"source": "userProvided", "dimensions": 2}}}),
        validate_setting("embedders", None),
    )
    assert user == {}


def test_reset_all_returns_to_defaults() -> None:
    user = _apply({"stopWords": ["a"], "typoTolerance": {"enabled": False}, "embedders": {"e": {}}})
    assert merge_settings(user, reset_all()) == {}
    keys = [{"foreignIndexUid": "authors", "fieldName": "author"}]
    assert merge_settings(_apply({"foreignKeys": keys}), reset_all()) == {}


def test_foreign_keys_are_stored_shown_and_never_sent_to_shards() -> None:
    keys = [{"fieldName": "author", "foreignIndexUid": "authors"}]
    user = _apply({"foreignKeys": keys})
    expected = [{"foreignIndexUid": "authors", "fieldName": "author"}]
    assert user == {"foreignKeys": expected}
    shown = public_settings(user)
    assert list(shown)[3:6] == ["sortableAttributes", "foreignKeys", "rankingRules"]
    assert shown["foreignKeys"] == expected and public_settings({})["foreignKeys"] == []
    assert "foreignKeys" not in effective_settings(user)


def test_effective_settings_overlay_user_values() -> None:
    user = _apply(
        {
            "displayedAttributes": ["title"],
            "searchableAttributes": ["body", "title"],
            "synonyms": {"a": ["b"]},
            "distinctAttribute": "sku",
            "searchCutoffMs": 20,
            "localizedAttributes": [{"attributePatterns": ["*_ja"], "locales": ["jpn"]}],
            "facetSearch": False,
            "prefixSearch": "disabled",
            "proximityPrecision": "byAttribute",
        }
    )
    settings = effective_settings(user)
    assert settings["displayedAttributes"] == ["title"]
    assert settings["searchableAttributes"] == ["body", "title"]
    assert settings["synonyms"] == {"a": ["b"]} and settings["distinctAttribute"] == "sku"
    assert settings["searchCutoffMs"] == 20 and settings["facetSearch"] is False
    assert settings["localizedAttributes"] == [{"attributePatterns": ["*_ja"], "locales": ["jpn"]}]
    assert (settings["prefixSearch"], settings["proximityPrecision"]) == ("disabled", "byAttribute")
    assert settings["stopWords"] == [] and list(settings) == list(SETTINGS_KEYS)


@pytest.mark.parametrize(
    ("secret", "masked"),
    [
        ("", "XXX..."),
        ("123456789", "XXX..."),
        ("1234567890", "12XXXX..."),
        ("x" * 19, "xxXXXX..."),
        ("abcdefghijklmnopqrst", "abcXXXXX..."),
        ("a" * 29, "aaaXXXXX..."),
        ("sk-abcdefghijklmnopqrstuvwxyz0123", "sk-abXXXXXX..."),
    ],
)
def test_mask_secret(secret: str, masked: str) -> None:
    assert mask_secret(secret) == masked


def test_api_keys_are_masked_in_get_and_details_but_kept_for_shards() -> None:
    update = validate_settings(
        {"embedders": {"e": {"source": "openAi", "apiKey": "sk-0123456789abcdef"}, "f": None}}
    )
    user = merge_settings({}, update)
    assert effective_settings(user)["embedders"]["e"]["apiKey"] == "sk-0123456789abcdef"
    shown = public_settings(user)["embedders"]["e"]
    assert (shown["source"], shown["apiKey"]) == ("openAi", "skXXXX...")
    assert update_details(update) == {
        "embedders": {"e": {"source": "openAi", "apiKey": "skXXXX..."}, "f": None}
    }
    assert update["embedders"]["e"]["apiKey"] == "sk-0123456789abcdef"


def test_details_are_the_update_itself() -> None:
    update = validate_settings({"stopWords": ["b", "a"], "pagination": None})
    assert update_details(update) == {"stopWords": ["a", "b"], "pagination": None}
    assert update_details(reset_all()) == reset_all()
