"""Applying batches to a ``ShardStore`` in unit tests, each under a batch uid never used before (a store
skips a batch uid it has already applied, as it must after a crash)."""

from __future__ import annotations

from itertools import count
from typing import Any

from shard.batches import BatchResult
from shard.store import ShardStore

_batch_uids = count(1)


def apply(store: ShardStore, *operations: dict[str, Any]) -> BatchResult:
    """The operations as one batch; the store's per-task result."""
    return store.apply_batch(next(_batch_uids), list(operations))


def add_values(store: ShardStore, index: str, field: str, *values: Any, first: int = 0) -> None:
    """One document per value, ``{"id": first + k, field: value}``, replacing any with that id."""
    docs = [[str(first + k), {"id": first + k, field: value}, k] for k, value in enumerate(values)]
    apply(store, {"op": "addDocuments", "task": 2, "index": index, "mode": "replace", "documents": docs})
