"""Dynamic search rules in the scheduler: the ``dsrUpdate``/``dsrClear`` batches (core.md §4.3: they
batch only with each other) and what they change in the ``rules`` table.

A batch's changes are computed on a copy of the stored rules, task by task in uid order, and
committed with the tasks' outcomes in the batch's one transaction, like index catalog changes.
"""

from __future__ import annotations

from typing import Any

from common.dynamic_search_rules import apply_patch
from common.task_vocabulary import SUCCEEDED
from common.timefmt import format_datetime
from scheduler.store import SchedulerStore
from scheduler.tasks import Outcome

RULE_TASK_TYPES = frozenset({"dsrUpdate", "dsrClear"})


def run_rules_batch(
    store: SchedulerStore, tasks: list[dict[str, Any]]
) -> tuple[dict[int, Outcome], list[tuple[str, Any]]]:
    rules = {rule["uid"]: rule for rule in store.list_rules()}
    outcomes: dict[int, Outcome] = {}
    changes: list[tuple[str, Any]] = []
    for task in tasks:
        if task["type"] == "dsrClear":
            outcomes[task["uid"]] = Outcome(SUCCEEDED, {"deletedDocuments": len(rules)})
            rules.clear()
            changes.append(("clearRules", None))
            continue
        uid, patch = task["params"]["uid"], task["params"].get("patch")
        if patch is None:
            rules.pop(uid, None)
            changes.append(("deleteRule", uid))
        else:
            rules[uid] = apply_patch(rules.get(uid), uid, patch, format_datetime(task["enqueuedNs"]))
            changes.append(("putRule", rules[uid]))
        # The reference counts the named rule even when a deletion found none.
        outcomes[task["uid"]] = Outcome(SUCCEEDED, {"updatedRules": 1})
    return outcomes, changes
