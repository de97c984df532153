"""Replication parameters (``--experimental-replication-parameters``): a task registered with the uid
a client chose (``TaskId`` header), or only checked (``DryRun: true``).

The documented rule: a chosen uid must be above every task uid given so far, so uids stay increasing
and the queue's order is the order of registration.
"""

from __future__ import annotations

from dataclasses import dataclass

from common.errors import ApiError


@dataclass(frozen=True)
class Replication:
    task_id: int | None
    dry_run: bool

    def task_uid(self, next_uid: int) -> int:
        """The uid of the task being registered when ``next_uid`` is the next free one."""
        if self.task_id is None:
            return next_uid
        if self.task_id < next_uid:
            raise ApiError(
                "bad_request",
                f"Received bad task id: `TaskId` {self.task_id} should be greater than or equal to "
                f"{next_uid}, the next task uid.",
            )
        return self.task_id
