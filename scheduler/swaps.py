"""An ``indexSwap`` task planned against the catalog (core.md §3.2 swap-indexes): its errors, the
operations every shard applies, and the catalog changes the batch commits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from common.errors import ApiError
from common.timefmt import now_ns
from scheduler.store import SchedulerStore


@dataclass
class SwapPlan:
    operations: list[dict[str, Any]] = field(default_factory=list)
    """The same for every shard: ``renameIndex`` / ``swapIndexes``."""
    changes: list[tuple[str, Any]] = field(default_factory=list)
    """Index records put and deleted, then the task history relabelled."""


def plan_swap(store: SchedulerStore, swaps: list[dict[str, Any]]) -> SwapPlan:
    """Raises ``ApiError`` (``index_not_found``, ``index_already_exists``) when the swaps cannot run."""
    missing = [
        uid
        for swap in swaps
        for uid in (swap["indexes"] if not swap.get("rename") else swap["indexes"][:1])
        if store.get_index(uid) is None
    ]
    if missing:
        message = (
            f"Index `{missing[0]}` not found."
            if len(missing) == 1
            else "Indexes " + ", ".join(f"`{m}`" for m in missing) + " not found."
        )
        raise ApiError("index_not_found", message)
    for swap in swaps:
        a, b = swap["indexes"]
        if swap.get("rename") and store.get_index(b) is not None:
            message = (
                f"Cannot rename `{a}` to `{b}` as the index already exists. "
                f"Hint: You can remove `{b}` first and then do your remove."
            )
            raise ApiError("index_already_exists", message)
    plan = SwapPlan()
    relabel: dict[str, str] = {}
    now = now_ns()
    for swap in swaps:
        a, b = swap["indexes"]
        index_a = store.get_index(a)
        assert index_a is not None
        if swap.get("rename"):
            plan.operations.append({"op": "renameIndex", "from": a, "to": b})
            plan.changes += [("delete", a), ("put", {**index_a, "uid": b, "updatedNs": now})]
            relabel[a] = b
        else:
            index_b = store.get_index(b)
            assert index_b is not None
            plan.operations.append({"op": "swapIndexes", "a": a, "b": b})
            plan.changes += [
                ("put", {**index_b, "uid": a, "updatedNs": now}),
                ("put", {**index_a, "uid": b, "updatedNs": now}),
            ]
            relabel[a], relabel[b] = b, a
    plan.changes.append(("relabel", relabel))
    return plan
