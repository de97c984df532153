"""The shape of index settings: the 20 keys of ``GET /indexes/{uid}/settings``, their defaults and routes.

The scheduler stores only what the user set (``UserSettings``); everything else is computed from the
defaults here, so changing a default never requires migrating stored indexes (search.md §6).
"""

from __future__ import annotations

import copy
from typing import Any, Final, NamedTuple

from common.settings.pagination import DEFAULT_MAX_TOTAL_HITS

UserSettings = dict[str, Any]
"""The settings a user set on an index: a subset of ``SETTINGS_KEYS``; nested objects hold only the
sub-fields that were set, embedders only their set fields."""

Settings = dict[str, Any]
"""Effective settings: every key of ``SETTINGS_KEYS``, in order, with defaults filled in."""

DEFAULT_RANKING_RULES: Final = (
    "words",
    "typo",
    "proximity",
    "attributeRank",
    "sort",
    "wordPosition",
    "exactness",
)

_DEFAULTS: Final[dict[str, Any]] = {
    "displayedAttributes": ["*"],
    "searchableAttributes": ["*"],
    "filterableAttributes": [],
    "sortableAttributes": [],
    "rankingRules": list(DEFAULT_RANKING_RULES),
    "stopWords": [],
    "nonSeparatorTokens": [],
    "separatorTokens": [],
    "dictionary": [],
    "synonyms": {},
    "distinctAttribute": None,
    "proximityPrecision": "byWord",
    "typoTolerance": {
        "enabled": True,
        "minWordSizeForTypos": {"oneTypo": 5, "twoTypos": 9},
        "disableOnWords": [],
        "disableOnAttributes": [],
        "disableOnNumbers": False,
    },
    "faceting": {"maxValuesPerFacet": 100, "sortFacetValuesBy": {"*": "alpha"}},
    "pagination": {"maxTotalHits": DEFAULT_MAX_TOTAL_HITS},
    "embedders": {},
    "searchCutoffMs": None,
    "localizedAttributes": None,
    "facetSearch": True,
    "prefixSearch": "indexingTime",
}

SETTINGS_KEYS: Final = tuple(_DEFAULTS)
"""In the order GET /settings serialises them."""

NESTED_KEYS: Final = frozenset({"typoTolerance", "faceting", "pagination"})
"""Objects whose sub-fields a PATCH changes one by one."""


def default(key: str) -> Any:
    """A fresh copy of one setting's default (callers may mutate it)."""
    return copy.deepcopy(_DEFAULTS[key])


def default_settings() -> Settings:
    return copy.deepcopy(_DEFAULTS)


class SubRoute(NamedTuple):
    path: str
    """Under ``/indexes/{uid}/settings/``."""
    key: str
    verb: str
    """The write verb; every sub-route also answers GET and DELETE."""


SUB_ROUTES: Final = (
    SubRoute("displayed-attributes", "displayedAttributes", "PUT"),
    SubRoute("searchable-attributes", "searchableAttributes", "PUT"),
    SubRoute("filterable-attributes", "filterableAttributes", "PUT"),
    SubRoute("sortable-attributes", "sortableAttributes", "PUT"),
    SubRoute("ranking-rules", "rankingRules", "PUT"),
    SubRoute("stop-words", "stopWords", "PUT"),
    SubRoute("non-separator-tokens", "nonSeparatorTokens", "PUT"),
    SubRoute("separator-tokens", "separatorTokens", "PUT"),
    SubRoute("dictionary", "dictionary", "PUT"),
    SubRoute("synonyms", "synonyms", "PUT"),
    SubRoute("distinct-attribute", "distinctAttribute", "PUT"),
    SubRoute("proximity-precision", "proximityPrecision", "PUT"),
    SubRoute("typo-tolerance", "typoTolerance", "PATCH"),
    SubRoute("faceting", "faceting", "PATCH"),
    SubRoute("pagination", "pagination", "PATCH"),
    SubRoute("embedders", "embedders", "PATCH"),
    SubRoute("search-cutoff-ms", "searchCutoffMs", "PUT"),
    SubRoute("localized-attributes", "localizedAttributes", "PUT"),
    SubRoute("facet-search", "facetSearch", "PUT"),
    SubRoute("prefix-search", "prefixSearch", "PUT"),
)


class ExperimentalSetting(NamedTuple):
    path: str
    key: str
    verb: str
    feature: str


EXPERIMENTAL_SETTINGS: Final = (ExperimentalSetting("chat", "chat", "PATCH", "chatCompletions"),)
"""Settings of experimental features Sift does not offer: known, so that they get a clear error."""

FOREIGN_KEYS: Final = SubRoute("foreign-keys", "foreignKeys", "PUT")
"""``foreignKeys`` (experimental feature ``foreignKeys``): ``[{"foreignIndexUid", "fieldName"}]``,
default ``[]``. Stored and echoed like the other settings, but set to a value only with the feature on,
and listed by GET /settings (after ``sortableAttributes``) only then. Shards never receive it: it is
not one of the 20 effective settings."""

UPDATE_ORDER: Final = (*SETTINGS_KEYS[:4], FOREIGN_KEYS.key, *SETTINGS_KEYS[4:])
"""Keys of a settings update (and its task details) in the reference's order."""
