"""Runtime experimental features (core.md §3.11): their names, defaults and PATCH merge.

Shared by the scheduler, which stores them, and the gateway, which serves and applies them, so the two
never disagree on the list or on what a PATCH does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The order of GET /experimental-features and of the "expected one of" list of an unknown field.
FEATURES: tuple[str, ...] = (
    "metrics", "logsRoute", "editDocumentsByFunction", "containsFilter", "dynamicSearchRules", "network",
    "getTaskDocumentsRoute", "taskQueueCompactionRoute", "compositeEmbedders", "chatCompletions",
    "multimodal", "foreignKeys", "disableDocumentsFetchQueue", "legacySearch", "renderRoute",
)  # fmt: skip

_NEVER_SET_IS_NULL = frozenset({"legacySearch"})
"""Features shown as ``null`` until a PATCH sets them (the contract's ``legacySearch``)."""

Features = dict[str, bool | None]


def default_features() -> Features:
    """What a fresh database holds: every feature off (``legacySearch`` not set)."""
    return {name: None if name in _NEVER_SET_IS_NULL else False for name in FEATURES}


def merge_features(current: Mapping[str, Any], changes: Mapping[str, Any]) -> Features:
    """The full feature object after a PATCH: known fields that are ``true``/``false`` change, omitted
    and ``null`` ones keep their value; the result is in contract order whatever ``current`` held."""
    merged = default_features()
    for source in (current, changes):
        merged.update({name: value for name, value in source.items() if name in merged and value is not None})
    return merged


@dataclass(frozen=True)
class FilterFeatures:
    """The features a filter's check depends on (search.md §4.3: ``CONTAINS``, ``_vectors``).

    Decided by the gateway when a request arrives and sent with the shard query or stored in the
    delete-by-filter task, so a shard never needs the catalog to check a filter.
    """

    contains_filter: bool = False
    multimodal: bool = False
    foreign_keys: bool = False

    def params(self) -> dict[str, bool]:
        return {
            "containsFilter": self.contains_filter,
            "multimodal": self.multimodal,
            "foreignKeys": self.foreign_keys,
        }

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> FilterFeatures:
        """Absent keys are off (tasks registered before a feature travelled lack it)."""
        flags = (params.get(name) for name in ("containsFilter", "multimodal", "foreignKeys"))
        return cls(*(bool(flag) for flag in flags))


NO_FEATURES = FilterFeatures()
