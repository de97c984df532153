"""Applying a settings update on top of the stored settings (PATCH semantics, search.md §6).

Only the fields sent change; ``null`` resets a field to its default (it is forgotten). ``typoTolerance``,
``faceting`` and ``pagination`` change sub-field by sub-field (``minWordSizeForTypos`` too), embedders
name by name and, inside one embedder, field by field (a new ``source`` resetting the previous one's).
"""

from __future__ import annotations

import copy
from typing import Any

from common.errors import ApiError
from common.settings.embedder_rules import check_merged_embedders, merge_embedder
from common.settings.model import NESTED_KEYS, UserSettings, default
from common.settings.specs import min_word_size_problem

_DEEP_FIELDS = frozenset({"minWordSizeForTypos"})


def merge_settings(user: UserSettings, update: dict[str, Any], index_uid: str | None = None) -> UserSettings:
    """The stored settings after ``update`` (a validated body); ``user`` is left untouched.

    Raises ``invalid_settings_typo_tolerance`` when the result has ``oneTypo > twoTypos``, and the
    embedder errors that depend on the stored embedders (``check_merged_embedders``): checks that need
    the stored value of what was not sent, so they run when the task is processed.
    """
    merged = copy.deepcopy(user)
    for key, value in update.items():
        if value is None:
            merged.pop(key, None)
        elif key in NESTED_KEYS:
            _set_unless_empty(merged, key, _merge_fields(merged.get(key, {}), value, _DEEP_FIELDS))
        elif key == "embedders":
            before = merged.get(key, {})
            after = _merge_embedders(before, value)
            check_merged_embedders(before, after, value, index_uid)
            _set_unless_empty(merged, key, after)
        else:
            merged[key] = copy.deepcopy(value)
    _check_min_word_sizes(merged)
    return merged


def _merge_fields(stored: dict[str, Any], update: dict[str, Any], deep: frozenset[str]) -> dict[str, Any]:
    merged = dict(stored)
    for name, value in update.items():
        if value is None:
            merged.pop(name, None)
        elif name in deep:
            _set_unless_empty(merged, name, _merge_fields(merged.get(name, {}), value, frozenset()))
        else:
            merged[name] = copy.deepcopy(value)
    return merged


def _merge_embedders(stored: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = dict(stored)
    for name, embedder in update.items():
        if embedder is None:
            merged.pop(name, None)
        else:
            merged[name] = merge_embedder(merged.get(name, {}), embedder)
    return merged


def _set_unless_empty(target: dict[str, Any], name: str, value: dict[str, Any]) -> None:
    """An emptied object is dropped, so that stored settings only ever hold what differs from defaults."""
    if value:
        target[name] = value
    else:
        target.pop(name, None)


def _check_min_word_sizes(user: UserSettings) -> None:
    sizes = {
        **default("typoTolerance")["minWordSizeForTypos"],
        **user.get("typoTolerance", {}).get("minWordSizeForTypos", {}),
    }
    problem = min_word_size_problem(sizes["oneTypo"], sizes["twoTypos"])
    if problem is not None:
        raise ApiError(
            "invalid_settings_typo_tolerance",
            f"Invalid value at `.typoTolerance.minWordSizeForTypos`: {problem}",
        )
