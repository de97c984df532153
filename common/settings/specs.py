"""What each setting's value must look like, with its error code and the contract's messages (search.md §6).

Every value spec here describes a value that is *set*; ``null`` (reset) is allowed by the body schemas
around them. Errors inside a setting carry that setting's code, including unknown and missing fields.
"""

from __future__ import annotations

from typing import Any, Final

from common.locales import LOCALES as LOCALE_CODES
from common.settings.embedder_rules import EMBEDDERS_SPEC
from common.validation import Kind, Schema, Spec

_U8_MAX: Final = 255
_BUILTIN_RULES: Final = frozenset(
    {"words", "typo", "proximity", "attribute", "attributeRank", "wordPosition", "sort", "exactness"}
)
_RESERVED_FIELDS: Final = frozenset({"_geo", "_geoDistance", "_geoPoint", "_geoRadius", "_geoBoundingBox"})

LOCALES: Final = tuple(LOCALE_CODES)
"""Locale codes accepted in ``localizedAttributes``, in the order error messages list them."""


def ranking_rule_problem(rule: str) -> str | None:
    """A built-in rule or ``<field>:asc|desc``; geo keywords are reserved (search.md §6.1)."""
    if rule in _BUILTIN_RULES:
        return None
    field, colon, order = rule.rpartition(":")
    if not colon or not field or order not in ("asc", "desc"):
        return (
            f"`{rule}` ranking rule is invalid. Valid ranking rules are words, typo, sort, proximity, "
            "attribute, exactness and custom ranking rules."
        )
    if field.startswith("_geoPoint("):
        return (
            "`_geoPoint` is a reserved keyword and thus can't be used as a ranking rule. "
            "`_geoPoint` can only be used for sorting at search time"
        )
    if field in _RESERVED_FIELDS or field.startswith(("_geoRadius(", "_geoBoundingBox(")):
        return f"`{field}` is a reserved keyword and thus can't be used as a ranking rule"
    return None


def _mixed_attribute_rules(rules: list[str]) -> str | None:
    if "attribute" in rules and ("attributeRank" in rules or "wordPosition" in rules):
        return (
            "Mixed usage of the attribute, attributeRank, and wordPosition ranking rules. You must either "
            "use the attribute ranking rule alone or the attributeRank and wordPosition ranking rules."
        )
    return None


def min_word_size_problem(one_typo: int, two_typos: int) -> str | None:
    """Wording kept verbatim from the contract (search.md §6.9), unbalanced backticks included."""
    if one_typo <= two_typos:
        return None
    return (
        "`minWordSizeForTypos` setting is invalid. `oneTypo` and `twoTypos` fields should be between `0` "
        "and `255`, and `twoTypos` should be greater or equals to `oneTypo` but found "
        f"`oneTypo: {one_typo}` and twoTypos: {two_typos}`."
    )


def _sent_min_word_sizes(sizes: dict[str, Any]) -> str | None:
    """Both sizes in one body can be checked at once; against a stored one, the task checks (merge.py)."""
    one, two = sizes.get("oneTypo"), sizes.get("twoTypos")
    return min_word_size_problem(one, two) if one is not None and two is not None else None


def _u8(value: int) -> str | None:
    if value > _U8_MAX:
        return f"value: `{value}` is too large to be deserialized, maximum value authorized is `{_U8_MAX}`"
    return None


def _non_zero(value: int) -> str | None:
    if value == 0:
        return "a non-zero integer value lower than `18446744073709551615` was expected, but found a zero"
    return None


def _strings(code: str) -> Spec:
    return Spec(Kind.ARRAY, code=code, items=Spec(Kind.STRING))


_STRING_LIST = Spec(Kind.ARRAY, items=Spec(Kind.STRING))

_FILTERABLE_RULE = Spec(
    Kind.STRING | Kind.OBJECT,
    schema=Schema(
        {
            "attributePatterns": Spec(Kind.ARRAY, required=True, items=Spec(Kind.STRING)),
            "features": Spec(
                Kind.OBJECT,
                schema=Schema(
                    {
                        "facetSearch": Spec(Kind.BOOLEAN),
                        "filter": Spec(
                            Kind.OBJECT,
                            schema=Schema({"equality": Spec(Kind.BOOLEAN), "comparison": Spec(Kind.BOOLEAN)}),
                        ),
                    }
                ),
            ),
        }
    ),
)

_TYPO_TOLERANCE = Schema(
    {
        "enabled": Spec(Kind.BOOLEAN, nullable=True),
        "minWordSizeForTypos": Spec(
            Kind.OBJECT,
            nullable=True,
            schema=Schema(
                {
                    "oneTypo": Spec(Kind.POSITIVE_INTEGER, nullable=True, check=_u8),
                    "twoTypos": Spec(Kind.POSITIVE_INTEGER, nullable=True, check=_u8),
                }
            ),
            check=_sent_min_word_sizes,
        ),
        "disableOnWords": Spec(Kind.ARRAY, nullable=True, items=Spec(Kind.STRING)),
        "disableOnAttributes": Spec(Kind.ARRAY, nullable=True, items=Spec(Kind.STRING)),
        "disableOnNumbers": Spec(Kind.BOOLEAN, nullable=True),
    }
)

_FACETING = Schema(
    {
        "maxValuesPerFacet": Spec(Kind.POSITIVE_INTEGER, nullable=True),
        "sortFacetValuesBy": Spec(
            Kind.OBJECT, nullable=True, values=Spec(Kind.STRING, choices=("alpha", "count"))
        ),
    }
)

_LOCALIZED_RULE = Spec(
    Kind.OBJECT,
    schema=Schema(
        {
            "attributePatterns": Spec(Kind.ARRAY, required=True, items=Spec(Kind.STRING)),
            "locales": Spec(Kind.ARRAY, required=True, items=Spec(Kind.STRING, choices=LOCALES)),
        }
    ),
)

_FOREIGN_KEY = Spec(
    Kind.OBJECT,
    schema=Schema(
        {
            "foreignIndexUid": Spec(Kind.STRING, required=True),
            "fieldName": Spec(Kind.STRING, required=True),
        }
    ),
)
FOREIGN_KEYS_SPEC: Final = Spec(Kind.ARRAY, code="invalid_settings_foreign_keys", items=_FOREIGN_KEY)
"""Any strings are accepted, as the reference does: the index and field are not checked."""

SETTING_SPECS: Final[dict[str, Spec]] = {
    "displayedAttributes": _strings("invalid_settings_displayed_attributes"),
    "searchableAttributes": _strings("invalid_settings_searchable_attributes"),
    "filterableAttributes": Spec(
        Kind.ARRAY, code="invalid_settings_filterable_attributes", items=_FILTERABLE_RULE
    ),
    "sortableAttributes": _strings("invalid_settings_sortable_attributes"),
    "rankingRules": Spec(
        Kind.ARRAY,
        code="invalid_settings_ranking_rules",
        items=Spec(Kind.STRING, check=ranking_rule_problem),
        check=_mixed_attribute_rules,
    ),
    "stopWords": _strings("invalid_settings_stop_words"),
    "nonSeparatorTokens": _strings("invalid_settings_non_separator_tokens"),
    "separatorTokens": _strings("invalid_settings_separator_tokens"),
    "dictionary": _strings("invalid_settings_dictionary"),
    "synonyms": Spec(Kind.OBJECT, code="invalid_settings_synonyms", values=_STRING_LIST),
    "distinctAttribute": Spec(Kind.STRING, code="invalid_settings_distinct_attribute"),
    "proximityPrecision": Spec(
        Kind.STRING, code="invalid_settings_proximity_precision", choices=("byWord", "byAttribute")
    ),
    "typoTolerance": Spec(Kind.OBJECT, code="invalid_settings_typo_tolerance", schema=_TYPO_TOLERANCE),
    "faceting": Spec(Kind.OBJECT, code="invalid_settings_faceting", schema=_FACETING),
    "pagination": Spec(
        Kind.OBJECT,
        code="invalid_settings_pagination",
        schema=Schema({"maxTotalHits": Spec(Kind.POSITIVE_INTEGER, nullable=True, check=_non_zero)}),
    ),
    "embedders": EMBEDDERS_SPEC,
    "searchCutoffMs": Spec(Kind.POSITIVE_INTEGER, code="invalid_settings_search_cutoff_ms"),
    "localizedAttributes": Spec(
        Kind.ARRAY, code="invalid_settings_localized_attributes", items=_LOCALIZED_RULE
    ),
    "facetSearch": Spec(Kind.BOOLEAN, code="invalid_settings_facet_search"),
    "prefixSearch": Spec(
        Kind.STRING, code="invalid_settings_prefix_search", choices=("indexingTime", "disabled")
    ),
}
"""Keyed in contract order (``SETTINGS_KEYS``)."""
