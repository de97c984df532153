"""Settings bodies: codes and deserr-style messages of search.md §6 and core.md §1.10, to the character."""

from __future__ import annotations

from typing import Any

import pytest

from common.errors import ApiError
from common.settings import SETTINGS_KEYS, merge_settings, validate_setting, validate_settings
from common.settings.specs import LOCALES


def _error(call: Any, *args: Any) -> ApiError:
    with pytest.raises(ApiError) as caught:
        call(*args)
    return caught.value


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            {"displayedAttributes": "doggo"},
            "invalid_settings_displayed_attributes",
            'Invalid value type at `.displayedAttributes`: expected an array, but found a string: `"doggo"`',
        ),
        (
            {"searchableAttributes": [1]},
            "invalid_settings_searchable_attributes",
            "Invalid value type at `.searchableAttributes[0]`: expected a string, but found a positive "
            "integer: `1`",
        ),
        (
            {"sortableAttributes": {"a": 1}},
            "invalid_settings_sortable_attributes",
            'Invalid value type at `.sortableAttributes`: expected an array, but found an object: `{"a":1}`',
        ),
        (
            {"stopWords": [None]},
            "invalid_settings_stop_words",
            "Invalid value type at `.stopWords[0]`: expected a string, but found null",
        ),
        (
            {"nonSeparatorTokens": True},
            "invalid_settings_non_separator_tokens",
            "Invalid value type at `.nonSeparatorTokens`: expected an array, but found a boolean: `true`",
        ),
        (
            {"separatorTokens": "x"},
            "invalid_settings_separator_tokens",
            'Invalid value type at `.separatorTokens`: expected an array, but found a string: `"x"`',
        ),
        (
            {"dictionary": [1.5]},
            "invalid_settings_dictionary",
            "Invalid value type at `.dictionary[0]`: expected a string, but found a number: `1.5`",
        ),
        (
            {"synonyms": {"a": "b"}},
            "invalid_settings_synonyms",
            'Invalid value type at `.synonyms.a`: expected an array, but found a string: `"b"`',
        ),
        (
            {"distinctAttribute": ["a"]},
            "invalid_settings_distinct_attribute",
            'Invalid value type at `.distinctAttribute`: expected a string, but found an array: `["a"]`',
        ),
        (
            {"proximityPrecision": "byWords"},
            "invalid_settings_proximity_precision",
            "Unknown value `byWords` at `.proximityPrecision`: did you mean `byWord`? expected one of "
            "`byWord`, `byAttribute`",
        ),
        (
            {"prefixSearch": "never"},
            "invalid_settings_prefix_search",
            "Unknown value `never` at `.prefixSearch`: expected one of `indexingTime`, `disabled`",
        ),
        (
            {"facetSearch": "yes"},
            "invalid_settings_facet_search",
            'Invalid value type at `.facetSearch`: expected a boolean, but found a string: `"yes"`',
        ),
        (
            {"searchCutoffMs": -1},
            "invalid_settings_search_cutoff_ms",
            "Invalid value type at `.searchCutoffMs`: expected a positive integer, but found a negative "
            "integer: `-1`",
        ),
        (
            {"searchCutoffMs": 1.5},
            "invalid_settings_search_cutoff_ms",
            "Invalid value type at `.searchCutoffMs`: expected a positive integer, but found a number: `1.5`",
        ),
        (
            {"pagination": {"maxTotalHits": 0}},
            "invalid_settings_pagination",
            "Invalid value at `.pagination.maxTotalHits`: a non-zero integer value lower than "
            "`18446744073709551615` was expected, but found a zero",
        ),
        (
            {"pagination": {"maxTotalHit": 3}},
            "invalid_settings_pagination",
            "Unknown field `maxTotalHit` inside `.pagination`: did you mean `maxTotalHits`? expected one of "
            "`maxTotalHits`",
        ),
        (
            {"faceting": {"maxValuesPerFacet": "ten"}},
            "invalid_settings_faceting",
            "Invalid value type at `.faceting.maxValuesPerFacet`: expected a positive integer, but found a "
            'string: `"ten"`',
        ),
        (
            {"faceting": {"sortFacetValuesBy": {"genre": "random"}}},
            "invalid_settings_faceting",
            "Unknown value `random` at `.faceting.sortFacetValuesBy.genre`: expected one of `alpha`, `count`",
        ),
        (
            {"typoTolerance": {"enabled": "no"}},
            "invalid_settings_typo_tolerance",
            'Invalid value type at `.typoTolerance.enabled`: expected a boolean, but found a string: `"no"`',
        ),
        (
            {"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 256}}},
            "invalid_settings_typo_tolerance",
            "Invalid value at `.typoTolerance.minWordSizeForTypos.oneTypo`: value: `256` is too large to be "
            "deserialized, maximum value authorized is `255`",
        ),
        (
            {"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 6, "twoTypos": 5}}},
            "invalid_settings_typo_tolerance",
            "Invalid value at `.typoTolerance.minWordSizeForTypos`: `minWordSizeForTypos` setting is "
            "invalid. `oneTypo` and `twoTypos` fields should be between `0` and `255`, and `twoTypos` "
            "should be greater or equals to `oneTypo` but found `oneTypo: 6` and twoTypos: 5`.",
        ),
        (
            {"typoTolerance": {"disableOnWord": []}},
            "invalid_settings_typo_tolerance",
            "Unknown field `disableOnWord` inside `.typoTolerance`: did you mean `disableOnWords`? expected "
            "one of `enabled`, `minWordSizeForTypos`, `disableOnWords`, `disableOnAttributes`, "
            "`disableOnNumbers`",
        ),
        (
            {"embedders": {"default": "openAi"}},
            "invalid_settings_embedders",
            'Invalid value type at `.embedders.default`: expected an object, but found a string: `"openAi"`',
        ),
        (
            {"embedders": []},
            "invalid_settings_embedders",
            "Invalid value type at `.embedders`: expected an object, but found an array: `[]`",
        ),
        (
            {"localizedAttributes": [{"locales": ["fr"]}]},
            "invalid_settings_localized_attributes",
            "Missing field `attributePatterns` inside `.localizedAttributes[0]`",
        ),
        (
            {"localizedAttributes": [{"attributePatterns": ["*"]}]},
            "invalid_settings_localized_attributes",
            "Missing field `locales` inside `.localizedAttributes[0]`",
        ),
        (
            {"filterableAttributes": [{"attributePatterns": ["a"], "features": {"filter": {"range": True}}}]},
            "invalid_settings_filterable_attributes",
            "Unknown field `range` inside `.filterableAttributes[0].features.filter`: expected one of "
            "`equality`, `comparison`",
        ),
        (
            {"filterableAttributes": [{"features": {}}]},
            "invalid_settings_filterable_attributes",
            "Missing field `attributePatterns` inside `.filterableAttributes[0]`",
        ),
        (
            {"filterableAttributes": ["a", 3]},
            "invalid_settings_filterable_attributes",
            "Invalid value type at `.filterableAttributes[1]`: expected a string or an object, but found a "
            "positive integer: `3`",
        ),
    ],
)
def test_type_and_value_errors_carry_the_settings_code(body: dict[str, Any], code: str, message: str) -> None:
    error = _error(validate_settings, body)
    assert (error.code, error.message, error.status) == (code, message, 400)


def test_unknown_root_field_is_a_bad_request_listing_every_setting() -> None:
    error = _error(validate_settings, {"rankingRule": ["words"]})
    assert error.code == "bad_request"
    assert error.message.startswith(
        "Unknown field `rankingRule`: did you mean `rankingRules`? expected one of "
    )
    listed = error.message.split("expected one of ")[1]
    names = [name.strip("`") for name in listed.split(", ")]
    assert [n for n in names if n not in ("foreignKeys", "chat")] == list(SETTINGS_KEYS)
    assert names.index("foreignKeys") == 4 and names[-1] == "chat"


@pytest.mark.parametrize("body", [None, [], "settings", 3])
def test_root_must_be_an_object(body: Any) -> None:
    error = _error(validate_settings, body)
    assert error.code == "bad_request"
    assert error.message.startswith("Invalid value type: expected an object, but found ")


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            "foo",
            "`foo` ranking rule is invalid. Valid ranking rules are words, typo, sort, proximity, attribute, "
            "exactness and custom ranking rules.",
        ),
        (
            "price:up",
            "`price:up` ranking rule is invalid. Valid ranking rules are words, typo, sort, proximity, "
            "attribute, exactness and custom ranking rules.",
        ),
        (
            ":asc",
            "`:asc` ranking rule is invalid. Valid ranking rules are words, typo, sort, proximity, "
            "attribute, exactness and custom ranking rules.",
        ),
        (
            "_geoPoint(48.8, 2.3):asc",
            "`_geoPoint` is a reserved keyword and thus can't be used as a ranking rule. `_geoPoint` can "
            "only be used for sorting at search time",
        ),
        ("_geo:desc", "`_geo` is a reserved keyword and thus can't be used as a ranking rule"),
        ("_geoDistance:asc", "`_geoDistance` is a reserved keyword and thus can't be used as a ranking rule"),
        (
            "_geoRadius(1, 2, 3):asc",
            "`_geoRadius(1, 2, 3)` is a reserved keyword and thus can't be used as a ranking rule",
        ),
    ],
)
def test_invalid_ranking_rules(rule: str, message: str) -> None:
    error = _error(validate_settings, {"rankingRules": ["words", rule]})
    assert error.code == "invalid_settings_ranking_rules"
    assert error.message == f"Invalid value at `.rankingRules[1]`: {message}"


@pytest.mark.parametrize("mixed", [["attribute", "attributeRank"], ["wordPosition", "words", "attribute"]])
def test_attribute_rule_cannot_be_mixed_with_its_split_rules(mixed: list[str]) -> None:
    error = _error(validate_settings, {"rankingRules": mixed})
    assert error.code == "invalid_settings_ranking_rules"
    assert error.message == (
        "Invalid value at `.rankingRules`: Mixed usage of the attribute, attributeRank, and wordPosition "
        "ranking rules. You must either use the attribute ranking rule alone or the attributeRank and "
        "wordPosition ranking rules."
    )


def test_valid_ranking_rules_are_kept_in_order_with_duplicates() -> None:
    rules = ["sort", "price:asc", "words", "title:desc", "attribute", "words", "a:b:desc"]
    assert validate_settings({"rankingRules": rules}) == {"rankingRules": rules}


def test_unknown_locale_lists_every_locale() -> None:
    body = {"localizedAttributes": [{"attributePatterns": ["*_fr"], "locales": ["fr", "french"]}]}
    error = _error(validate_settings, body)
    assert error.code == "invalid_settings_localized_attributes"
    expected = ", ".join(f"`{locale}`" for locale in LOCALES)
    assert error.message == (
        f"Unknown value `french` at `.localizedAttributes[0].locales[1]`: expected one of {expected}"
    )
    assert len(LOCALES) == len(set(LOCALES)) == 139
    assert LOCALES[:2] == ("af", "ak") and LOCALES[-1] == "cmn" and {"en", "eng", "zh", "zho"} <= set(LOCALES)


def test_sets_are_sorted_and_deduplicated() -> None:
    body = {
        "sortableAttributes": ["year", "title", "year"],
        "stopWords": ["the", "a", "the", "an"],
        "nonSeparatorTokens": ["#", "@", "#"],
        "separatorTokens": ["|", "&", "|"],
        "dictionary": ["J. R. R.", "C++", "C++"],
        "typoTolerance": {"disableOnWords": ["zz", "aa", "zz"], "disableOnAttributes": ["b", "a", "b"]},
    }
    assert validate_settings(body) == {
        "sortableAttributes": ["title", "year"],
        "stopWords": ["a", "an", "the"],
        "nonSeparatorTokens": ["#", "@"],
        "separatorTokens": ["&", "|"],
        "dictionary": ["C++", "J. R. R."],
        "typoTolerance": {"disableOnWords": ["aa", "zz"], "disableOnAttributes": ["a", "b"]},
    }


def test_sets_sort_by_code_point_like_utf8_bytes() -> None:
    assert validate_setting("stopWords", ["é", "z", "A", "a"]) == {"stopWords": ["A", "a", "z", "é"]}


@pytest.mark.parametrize("key", ["displayedAttributes", "searchableAttributes"])
def test_a_star_anywhere_is_the_wildcard(key: str) -> None:
    assert validate_settings({key: ["title", "*", "body"]}) == {key: ["*"]}
    assert validate_settings({key: ["title", "body", "title"]}) == {key: ["title", "body", "title"]}


def test_synonyms_are_kept_as_sent() -> None:
    synonyms = {"wolverine": ["logan", "xmen", "logan"], "Logan": ["wolverine"], "": []}
    assert validate_settings({"synonyms": synonyms}) == {"synonyms": synonyms}


def test_filterable_rules_keep_order_and_get_default_features() -> None:
    body = {
        "filterableAttributes": [
            "genre",
            {"attributePatterns": ["price", "*_id"]},
            {"attributePatterns": ["rating"], "features": {"filter": {"comparison": True}}},
            {"attributePatterns": ["tags"], "features": {"facetSearch": True, "filter": {"equality": False}}},
            "_geo",
        ]
    }
    defaults = {"facetSearch": False, "filter": {"equality": True, "comparison": False}}
    assert validate_settings(body) == {
        "filterableAttributes": [
            "genre",
            {"attributePatterns": ["price", "*_id"], "features": defaults},
            {
                "attributePatterns": ["rating"],
                "features": {"facetSearch": False, "filter": {"equality": True, "comparison": True}},
            },
            {
                "attributePatterns": ["tags"],
                "features": {"facetSearch": True, "filter": {"equality": False, "comparison": False}},
            },
            "_geo",
        ]
    }


def test_null_resets_and_update_is_keyed_in_contract_order() -> None:
    body = {"prefixSearch": None, "stopWords": None, "displayedAttributes": ["a"], "typoTolerance": None}
    update = validate_settings(body)
    assert update == {
        "displayedAttributes": ["a"],
        "stopWords": None,
        "typoTolerance": None,
        "prefixSearch": None,
    }
    assert list(update) == ["displayedAttributes", "stopWords", "typoTolerance", "prefixSearch"]


def test_nested_nulls_reset_single_sub_fields() -> None:
    body = {
        "typoTolerance": {"enabled": None, "minWordSizeForTypos": {"oneTypo": None, "twoTypos": 4}},
        "faceting": {"sortFacetValuesBy": None, "maxValuesPerFacet": 3},
        "pagination": {"maxTotalHits": None},
        "embedders": {"old": None, "new": {"source": "userProvided", "dimensions": 3}},
    }
    assert validate_settings(body) == {
        "typoTolerance": {"enabled": None, "minWordSizeForTypos": {"oneTypo": None, "twoTypos": 4}},
        "faceting": {"sortFacetValuesBy": None, "maxValuesPerFacet": 3},
        "pagination": {"maxTotalHits": None},
        "embedders": {"old": None, "new": {"source": "userProvided", "dimensions": 3}},
    }


def test_one_min_word_size_alone_is_accepted_here_and_checked_by_the_task() -> None:
    body = {"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 200}}}
    assert validate_settings(body) == body


def test_chat_settings_need_their_feature() -> None:
    error = _error(validate_settings, {"stopWords": [], "chat": {}})
    assert error.code == "feature_not_enabled" and error.status == 400
    assert error.message.startswith(
        "Using the `chat` index setting requires enabling the `chatCompletions` experimental feature. See "
    )
    assert validate_settings({"chat": None}) == {}


def test_foreign_keys_are_validated_and_kept_in_order() -> None:
    """Whether the feature is on is the gateway's check; the body is validated here."""
    keys = [{"fieldName": "author", "foreignIndexUid": "authors"}]
    update = validate_settings({"rankingRules": ["words"], "foreignKeys": keys, "stopWords": []})
    assert list(update) == ["foreignKeys", "rankingRules", "stopWords"]
    assert update["foreignKeys"] == [{"foreignIndexUid": "authors", "fieldName": "author"}]
    assert validate_settings({"foreignKeys": None}) == {"foreignKeys": None}
    error = _error(validate_settings, {"foreignKeys": [{"foreignIndexUid": "a"}]})
    assert (error.code, error.message) == (
        "invalid_settings_foreign_keys",
        "Missing field `fieldName` inside `.foreignKeys[0]`",
    )


def test_empty_body_changes_nothing() -> None:
    assert validate_settings({}) == {}


def test_too_many_embedders_fail_the_task_not_the_request() -> None:
    """As the reference: 257 embedders are enqueued, and the task fails once they are merged."""
    embedders = {f"e{i}": {"source": "userProvided", "dimensions": 2} for i in range(257)}
    update = validate_settings({"embedders": embedders})
    with pytest.raises(ApiError) as raised:
        merge_settings({}, update, "many")
    assert raised.value.code == "invalid_settings_embedders"
    assert raised.value.message == (
        "Index `many`: Too many embedders in the configuration. Found 257, but limited to 256."
    )
    assert merge_settings({}, validate_settings({"embedders": dict(list(embedders.items())[:256])}))
