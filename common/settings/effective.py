"""From what a user set to what an index uses: defaults filled in, secrets hidden for display."""

from __future__ import annotations

import copy
from typing import Any

from common.settings.embedders import resolved_embedders
from common.settings.model import FOREIGN_KEYS, NESTED_KEYS, Settings, UserSettings, default_settings

_REPLACED_WHOLE = frozenset({"sortFacetValuesBy"})
"""Nested values that a user replaces as a whole rather than field by field."""


def effective_settings(user: UserSettings) -> Settings:
    """All 20 settings in contract order; this is what shards receive and GET /settings shows."""
    settings = default_settings()
    for key, value in user.items():
        if key not in settings:
            continue
        settings[key] = _overlay(settings[key], value) if key in NESTED_KEYS else copy.deepcopy(value)
    sort_by = settings["faceting"]["sortFacetValuesBy"]
    # The `*` fallback is always listed; keys come out sorted, as the reference's ordered map does.
    settings["faceting"]["sortFacetValuesBy"] = dict(sorted({"*": "alpha", **sort_by}.items()))
    settings["embedders"] = resolved_embedders(settings["embedders"])
    return settings


def _overlay(defaults: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    merged = dict(defaults)
    for name, value in user.items():
        if isinstance(defaults.get(name), dict) and name not in _REPLACED_WHOLE:
            merged[name] = _overlay(defaults[name], value)
        else:
            merged[name] = copy.deepcopy(value)
    return merged


def public_settings(user: UserSettings) -> Settings:
    """Effective settings as GET shows them: embedder API keys masked, and ``foreignKeys`` after
    ``sortableAttributes`` (the gateway drops it while its feature is off)."""
    settings = effective_settings(user)
    settings["embedders"] = mask_embedders(settings["embedders"])
    shown: Settings = {}
    for key, value in settings.items():
        shown[key] = value
        if key == "sortableAttributes":
            shown[FOREIGN_KEYS.key] = copy.deepcopy(user.get(FOREIGN_KEYS.key, []))
    return shown


def mask_embedders(embedders: dict[str, Any] | None) -> dict[str, Any] | None:
    """A copy with every embedder's ``apiKey`` masked (search.md §6, core.md §3.4.3)."""
    if embedders is None:
        return None
    masked: dict[str, Any] = {}
    for name, embedder in embedders.items():
        masked[name] = _masked_embedder(embedder)
    return masked


def _masked_embedder(embedder: Any) -> Any:
    """The embedder with its ``apiKey`` masked, and those of a composite's two embedders."""
    if not isinstance(embedder, dict):
        return embedder
    masked = dict(embedder)
    if isinstance(masked.get("apiKey"), str):
        masked["apiKey"] = mask_secret(masked["apiKey"])
    for side in ("searchEmbedder", "indexingEmbedder"):
        if side in masked:
            masked[side] = _masked_embedder(masked[side])
    return masked


def mask_secret(secret: str) -> str:
    """Keep the first 0/2/3/5 characters for lengths <10/<20/<30/>=30, then `XXX...` to `XXXXXX...`."""
    length = len(secret)
    if length < 10:
        return "XXX..."
    if length < 20:
        return secret[:2] + "XXXX..."
    if length < 30:
        return secret[:3] + "XXXXX..."
    return secret[:5] + "XXXXXX..."


def update_details(update: dict[str, Any]) -> dict[str, Any]:
    """A settingsUpdate task's ``details``: the submitted settings, API keys masked (core.md §3.4.3)."""
    details = copy.deepcopy(update)
    if details.get("embedders") is not None:
        details["embedders"] = mask_embedders(details["embedders"])
    return details
