"""The ``/network`` record (core.md §3.15): one durable meta record behind the network rpcs.

As with the experimental features, the gateway validates and is the only writer; each PATCH is
merged and committed (fsync) in one transaction before the reply, so an acknowledged change survives
a crash of the scheduler.
"""

from __future__ import annotations

from typing import Any

from common.network import EMPTY, merge_network, public_network
from scheduler.store import SchedulerStore

_META_NAME = "network"


class NetworkCatalog:
    def __init__(self, store: SchedulerStore) -> None:
        self.store = store

    def get(self) -> dict[str, Any]:
        return public_network(self.store.get_meta(_META_NAME, EMPTY))

    def update(self, patch: dict[str, Any]) -> dict[str, Any]:
        """Applies a validated PATCH body; errors that depend on the stored remotes raise ``ApiError``."""
        with self.store.write() as txn:
            merged = merge_network(txn.get_meta(_META_NAME, EMPTY), patch)
            txn.set_meta(_META_NAME, merged)
        return public_network(merged)
