"""The gateway's copy of the runtime experimental features, and what they enable with the launch flags.

The scheduler stores the features durably; the gateway loads them at start-up and, being the only
process that changes them, replaces this copy after each PATCH, so requests read them without an rpc.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from common.config import Config
from common.errors import ApiError
from common.features import Features, FilterFeatures, merge_features

# Features a launch option (CLI, env or config file) also turns on, whatever the runtime value.
_LAUNCH_OPTIONS = {
    "metrics": "experimental_enable_metrics",
    "logsRoute": "experimental_enable_logs_route",
    "containsFilter": "experimental_contains_filter",
}


class RuntimeFeatures:
    def __init__(self, config: Config) -> None:
        self._launched = frozenset(name for name, flag in _LAUNCH_OPTIONS.items() if getattr(config, flag))
        self._runtime = merge_features({}, {})
        self.updating = asyncio.Lock()
        """Held around a PATCH, so the copy ends as the scheduler's last committed record."""

    def replace(self, features: Mapping[str, Any]) -> None:
        """Take the scheduler's record (after start-up or a PATCH)."""
        self._runtime = merge_features(features, {})

    def public(self) -> Features:
        """The GET/PATCH object: the runtime values, as PATCH set them (launch options not folded in)."""
        return dict(self._runtime)

    def enabled(self, name: str) -> bool:
        """Effective: the launch option or the runtime value."""
        return name in self._launched or bool(self._runtime[name])

    def require(self, name: str, message: str) -> None:
        """``feature_not_enabled`` with the route's own sentence (the reference words each differently)."""
        if not self.enabled(name):
            raise ApiError("feature_not_enabled", message)

    def filters(self) -> FilterFeatures:
        return FilterFeatures(
            self.enabled("containsFilter"), self.enabled("multimodal"), self.enabled("foreignKeys")
        )
