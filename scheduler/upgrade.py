"""The dumpless upgrade (``--experimental-dumpless-upgrade``): an ``upgradeDatabase`` task that brings
an older data directory (``common/data_version.py``) to the current format, in place.

At start, the scheduler enqueues the task when the directory is older and none is enqueued (after a
crash mid-upgrade, the in-flight batch re-runs instead). It is planned before any other batch but
cancelations (core.md §4.2). Every shard rebuilds what its format stores differently in one write
transaction that records the batch (``shard/index/upgrade.py``), so a shard killed mid-way upgrades
again and one that committed answers from its record; only when every shard has committed is the
``VERSION`` file replaced, which lets the launcher start the gateway. A failed upgrade stops the
scheduler without committing the batch: the launch fails with its output, the directory keeps its
older ``VERSION``, and the next launch with the flag re-runs the same batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from common.data_version import CURRENT_FORMAT, read_format, shown, write_format
from common.logging import get_logger
from common.task_vocabulary import ENQUEUED, SUCCEEDED
from scheduler.store import SchedulerStore
from scheduler.tasks import Outcome

log = get_logger(__name__)

Dispatch = Callable[[list[list[dict[str, Any]]]], Awaitable[Any]]


class _Registrar(Protocol):
    async def register(
        self, task_type: str, index_uid: str | None, params: dict[str, Any], details: dict[str, Any] | None
    ) -> dict[str, Any]: ...


class DatabaseUpgrade:
    def __init__(self, store: SchedulerStore, root: Path, shard_count: int, enabled: bool) -> None:
        self.store = store
        self.root = root
        self.shard_count = shard_count
        self.enabled = enabled

    async def enqueue_if_needed(self, service: _Registrar) -> None:
        found = read_format(self.root)
        if not self.enabled or found is None or found >= CURRENT_FORMAT:
            return
        if self.store.bitmap("type:upgradeDatabase") & self.store.bitmap(f"status:{ENQUEUED}"):
            return
        details = {"upgradeFrom": shown(found), "upgradeTo": shown(CURRENT_FORMAT)}
        task = await service.register("upgradeDatabase", None, {}, details)
        log.info("database upgrade enqueued", task_uid=task["uid"], **details)

    async def run(self, tasks: list[dict[str, Any]], dispatch: Dispatch) -> dict[int, Outcome]:
        try:
            operation = {"op": "upgradeStore", "task": tasks[0]["uid"]}
            await dispatch([[operation] for _ in range(self.shard_count)])
            await asyncio.to_thread(write_format, self.root)
        except Exception as error:
            log.error("the database upgrade failed; the next launch re-runs it", exc_info=error)
            raise SystemExit(1) from error
        log.info("database upgraded", format=CURRENT_FORMAT)
        return {task["uid"]: Outcome(SUCCEEDED) for task in tasks}
