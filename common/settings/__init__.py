"""Index settings (search.md §6): their keys and defaults, body validation, PATCH merging, and what a
change forces shards to recompute. Shared by the gateway (validation), the scheduler (storage, merging)
and shards (effective settings, reindexing decisions)."""

from common.settings.effective import effective_settings, mask_secret, public_settings, update_details
from common.settings.merge import merge_settings
from common.settings.model import (
    EXPERIMENTAL_SETTINGS,
    FOREIGN_KEYS,
    SETTINGS_KEYS,
    SUB_ROUTES,
    ExperimentalSetting,
    Settings,
    SubRoute,
    UserSettings,
    default_settings,
)
from common.settings.validation import (
    SettingsUpdate,
    feature_not_enabled,
    foreign_keys_not_enabled,
    reset_all,
    validate_setting,
    validate_settings,
)

__all__ = [
    "EXPERIMENTAL_SETTINGS",
    "FOREIGN_KEYS",
    "SETTINGS_KEYS",
    "SUB_ROUTES",
    "ExperimentalSetting",
    "Settings",
    "SettingsUpdate",
    "SubRoute",
    "UserSettings",
    "default_settings",
    "effective_settings",
    "feature_not_enabled",
    "foreign_keys_not_enabled",
    "mask_secret",
    "merge_settings",
    "public_settings",
    "reset_all",
    "update_details",
    "validate_setting",
    "validate_settings",
]
