"""Running a batch of ``settingsUpdate`` tasks (with the ``clear`` document deletions batched among them).

Each task's update is merged, in uid order, onto the catalog's stored settings; a task whose merge fails
(a check that needs the stored values) fails alone. Shards then receive one ``updateSettings`` operation
each, carrying the final effective settings, after the clears: a shard reindexes at most once per batch,
and on documents that survive the batch. The catalog learns the new settings in the executor's commit,
so ``GetSettings`` shows them only once the tasks succeeded.

The batch is applied in two phases (``scheduler/prepare.py``, through ``dispatch``): when the
``updateSettings`` operation fails on any shard (an embedder failing on a text that shard holds), no
shard applies it, every settings task of the batch fails with its error, and the catalog keeps the
index's settings; the batch's clears still apply.

A change that starts using ``_geo`` (filterable or sortable) or ``_geojson`` (filterable) first asks the
shards whether a stored document holds an invalid one (read-only); if so, every settings task of the batch
fails with that document's error and nothing is sent, so settings and data stay as they were everywhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from common.documents.geo import uses_geo
from common.documents.geojson import uses_geojson
from common.errors import ApiError, index_not_found
from common.settings import effective_settings, merge_settings
from common.task_vocabulary import FAILED, SUCCEEDED
from common.timefmt import now_ns
from scheduler.store import SchedulerStore, new_index_record
from scheduler.tasks import Outcome

Operations = list[list[dict[str, Any]]]
Dispatch = Callable[[Operations], Awaitable[dict[str, dict[str, int]]]]
"""Applies per-shard operations in two phases; returns the counts shards reported per task uid (as a
string), or the error of a task some shard failed."""
FirstInvalid = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Asks the shards for the earliest stored document failing the given geo checks (its error)."""
CatalogChange = tuple[str, Any]


async def run_settings_batch(
    store: SchedulerStore,
    tasks: list[dict[str, Any]],
    shard_count: int,
    dispatch: Dispatch,
    first_invalid: FirstInvalid,
) -> tuple[dict[int, Outcome], list[CatalogChange]]:
    uid = tasks[0]["indexUid"]
    index = store.get_index(uid)
    settings = index.get("settings", {}) if index is not None else {}
    exists = index is not None
    results: dict[int, Outcome] = {}
    clears: list[int] = []
    last_applied: int | None = None
    for task in tasks:
        creates = task["type"] == "settingsUpdate" and task["params"].get("allowIndexCreation", False)
        if not exists and not creates:
            results[task["uid"]] = Outcome(FAILED, error=index_not_found(uid).to_dict())
        elif task["type"] != "settingsUpdate":
            clears.append(task["uid"])
        else:
            try:
                settings = merge_settings(settings, task["params"]["settings"], uid)
            except ApiError as error:
                results[task["uid"]] = Outcome(FAILED, error=error.to_dict())
                continue
            exists = True
            last_applied = task["uid"]
            results[task["uid"]] = Outcome(SUCCEEDED)
    if last_applied is not None and index is not None and not clears:
        # Clears run first in the batch and leave no document to check.
        invalid = await _stored_geo_error(index, settings, first_invalid)
        if invalid is not None:
            failed = Outcome(FAILED, error=invalid)
            return {key: failed if done.status == SUCCEEDED else done for key, done in results.items()}, []
    operations: list[dict[str, Any]] = [{"op": "clearDocuments", "task": t, "index": uid} for t in clears]
    if last_applied is not None:
        effective = effective_settings(settings)
        operations.append({"op": "updateSettings", "task": last_applied, "index": uid, "settings": effective})
    counts = await dispatch([list(operations) for _ in range(shard_count)]) if operations else {}
    for task_uid in clears:
        results[task_uid] = Outcome(SUCCEEDED, counts.get(str(task_uid), {"deletedDocuments": 0}))
    refused: Any = counts.get(str(last_applied), {}).get("error") if last_applied is not None else None
    if refused is not None:
        # No shard applied them (one failed them: scheduler/prepare.py): the merged settings of
        # every task fail together, and the catalog keeps the index's settings.
        for task_uid, done in results.items():
            if done.status == SUCCEEDED and task_uid not in clears:
                results[task_uid] = Outcome(FAILED, error=refused)
        settings = index.get("settings", {}) if index is not None else {}
        if index is None or not clears:
            return results, []
    if last_applied is None and not clears:
        return results, []
    now = now_ns()
    record = index or new_index_record(uid, now)
    return results, [("put", {**record, "updatedNs": now, "settings": settings})]


async def _stored_geo_error(
    index: dict[str, Any], settings: dict[str, Any], first_invalid: FirstInvalid
) -> dict[str, Any] | None:
    """The error of a stored document the new settings would start indexing a bad geo value of."""
    before = index.get("settings", {})
    geo = uses_geo(settings) and not uses_geo(before)
    geojson = uses_geojson(settings) and not uses_geojson(before)
    if not geo and not geojson:
        return None
    request = {"index": index["uid"], "primaryKey": index.get("primaryKey"), "geo": geo, "geojson": geojson}
    return await first_invalid(request)
