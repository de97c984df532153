"""Validation of settings bodies: ``PATCH /settings`` and every per-setting sub-route (search.md §6).

A validated body becomes an *update*: the settings that were sent, normalised (sets sorted and
deduplicated, a ``*`` anywhere in displayed/searchable attributes collapsed to the wildcard, filterable
rule objects completed with their default features), ``None`` meaning "reset to default".

Embedders are checked as the reference checks a body (``embedder_rules``); what needs the stored
settings is checked when the task runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final

from common.errors import ApiError
from common.settings.embedder_rules import NO_FEATURE, Enabled, check_sent_embedders
from common.settings.model import (
    EXPERIMENTAL_SETTINGS,
    FOREIGN_KEYS,
    UPDATE_ORDER,
    ExperimentalSetting,
)
from common.settings.specs import FOREIGN_KEYS_SPEC, SETTING_SPECS
from common.validation import Kind, Schema, Spec, validate

SettingsUpdate = dict[str, Any]

_SPECS: Final = {**SETTING_SPECS, FOREIGN_KEYS.key: FOREIGN_KEYS_SPEC}
_BODY_ORDER: Final = (*UPDATE_ORDER, "chat")
"""Field order of the reference's settings object, which "expected one of" lists follow."""

_SETTINGS_BODY = Schema(
    {
        name: dataclasses.replace(_SPECS[name], nullable=True)
        if name in _SPECS
        else Spec(Kind.ANY, code="invalid_settings_index_chat", nullable=True)
        for name in _BODY_ORDER
    }
)


def validate_settings(body: Any, enabled: Enabled = NO_FEATURE) -> SettingsUpdate:
    """The update of a ``PATCH /settings`` body, keyed in contract order; ``enabled`` tells whether an
    experimental feature is on (composite and multimodal embedders need theirs).

    A ``foreignKeys`` value is kept: whether its feature is on is the caller's check
    (``foreign_keys_not_enabled``)."""
    fields = _SETTINGS_BODY.validate(body)
    for setting in EXPERIMENTAL_SETTINGS:
        if fields.pop(setting.key, None) is not None:
            raise feature_not_enabled(setting)
    _check_embedders(fields, enabled)
    return {key: normalize(key, fields[key]) for key in UPDATE_ORDER if key in fields}


def validate_setting(key: str, body: Any, enabled: Enabled = NO_FEATURE) -> SettingsUpdate:
    """The update of a sub-route body (whose root is the setting's value; ``null`` resets it)."""
    value = validate(dataclasses.replace(_SPECS[key], nullable=True), body)
    _check_embedders({key: value}, enabled)
    return {key: normalize(key, value)}


def _check_embedders(fields: dict[str, Any], enabled: Enabled) -> None:
    if fields.get("embedders") is not None:
        check_sent_embedders(fields["embedders"], enabled)


def reset_all() -> SettingsUpdate:
    """``DELETE /settings``: every setting back to its default, ``foreignKeys`` and ``chat`` included
    (the reference's task details name all 22)."""
    return dict.fromkeys((*UPDATE_ORDER, "chat"))


def foreign_keys_not_enabled() -> ApiError:
    """Setting ``foreignKeys`` to a value (not resetting it) while the feature is off."""
    return ApiError(
        "feature_not_enabled",
        "setting `foreignKeys` in the index settings requires enabling the `foreign_keys` experimental"
        " feature. See https://github.com/orgs/meilisearch/discussions/873",
    )


def feature_not_enabled(setting: ExperimentalSetting) -> ApiError:
    return ApiError(
        "feature_not_enabled",
        f"Using the `{setting.key}` index setting requires enabling the `{setting.feature}` experimental "
        "feature. See https://www.meilisearch.com/docs/reference/api/experimental_features",
    )


def normalize(key: str, value: Any) -> Any:
    """A validated value as it is stored and shown (``None`` stays ``None``)."""
    if value is None:
        return None
    normalizer = _NORMALIZERS.get(key)
    return normalizer(value) if normalizer is not None else value


def _sorted_set(values: list[str]) -> list[str]:
    """Python orders str by code point, which is the byte order of UTF-8, as the reference's sets."""
    return sorted(set(values))


def _wildcard(attributes: list[str]) -> list[str]:
    return ["*"] if "*" in attributes else attributes


def _filterable_rule(rule: str | dict[str, Any]) -> str | dict[str, Any]:
    """Object rules get their defaults spelled out: no facet search, equality only (search.md §6.3)."""
    if isinstance(rule, str):
        return rule
    features = rule.get("features", {})
    filters = features.get("filter", {})
    return {
        "attributePatterns": rule["attributePatterns"],
        "features": {
            "facetSearch": features.get("facetSearch", False),
            "filter": {
                "equality": filters.get("equality", True),
                "comparison": filters.get("comparison", False),
            },
        },
    }


def _typo_tolerance(typo: dict[str, Any]) -> dict[str, Any]:
    sets = ("disableOnWords", "disableOnAttributes")
    return {name: _sorted_set(v) if name in sets and v is not None else v for name, v in typo.items()}


_NORMALIZERS: Final[dict[str, Callable[[Any], Any]]] = {
    "displayedAttributes": _wildcard,
    "searchableAttributes": _wildcard,
    "filterableAttributes": lambda rules: [_filterable_rule(rule) for rule in rules],
    "sortableAttributes": _sorted_set,
    "stopWords": _sorted_set,
    "nonSeparatorTokens": _sorted_set,
    "separatorTokens": _sorted_set,
    "dictionary": _sorted_set,
    "typoTolerance": _typo_tolerance,
    "foreignKeys": lambda keys: [
        {"foreignIndexUid": key["foreignIndexUid"], "fieldName": key["fieldName"]} for key in keys
    ],
}
