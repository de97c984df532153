"""The runtime experimental features (core.md §3.11): one durable record behind the feature rpcs.

The gateway validates PATCH bodies and is the only caller that changes the record; a change is
committed (fsync) before the reply, so an acknowledged PATCH survives a crash of the scheduler.
"""

from __future__ import annotations

from typing import Any

from common.features import Features, merge_features
from scheduler.store import SchedulerStore

_META_NAME = "experimental_features"


class FeatureCatalog:
    def __init__(self, store: SchedulerStore) -> None:
        self.store = store

    def get(self) -> Features:
        """Every feature in contract order; those never stored have their defaults."""
        return merge_features(self.store.get_meta(_META_NAME, {}), {})

    def update(self, changes: dict[str, Any]) -> Features:
        """Applies a validated PATCH body (``null`` keeps a value) and returns the full record."""
        with self.store.write() as txn:
            merged = merge_features(txn.get_meta(_META_NAME, {}), changes)
            txn.set_meta(_META_NAME, merged)
        return merged
