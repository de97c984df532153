"""Replication parameters (``--experimental-replication-parameters``) on the gateway: the ``TaskId`` and
``DryRun`` headers of a request, read where its task is registered.

A request middleware (installed only with the option) keeps the two raw headers in a context
variable; ``Cluster.register_task`` reads them, so every task-creating route honours them without
each handler passing them on, and a route that registers no task never looks at them.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from sanic import Request

from common.errors import ApiError

_U32_MAX = 2**32 - 1


@dataclass(frozen=True)
class TaskHeaders:
    task_id: str | None = None
    dry_run: str | None = None

    def task_uid(self) -> int | None:
        if self.task_id is None:
            return None
        value = self.task_id.strip()
        if not value.isdigit() or int(value) > _U32_MAX:
            raise ApiError(
                "bad_request",
                f"Invalid `TaskId` header: `{self.task_id}` is not a valid task uid. It should be an "
                f"integer between 0 and {_U32_MAX}.",
            )
        return int(value)

    def is_dry_run(self) -> bool:
        if self.dry_run is None:
            return False
        value = self.dry_run.strip().lower()
        if value not in ("true", "false"):
            raise ApiError(
                "bad_request", f"Invalid `DryRun` header: `{self.dry_run}` should be `true` or `false`."
            )
        return value == "true"


NO_HEADERS = TaskHeaders()
task_headers: ContextVar[TaskHeaders] = ContextVar("task_headers", default=NO_HEADERS)


def keep_task_headers(request: Request) -> None:
    """Request middleware: the request's handler runs in this context, and so sees these values."""
    task_id, dry_run = request.headers.get("taskid"), request.headers.get("dryrun")
    task_headers.set(NO_HEADERS if task_id is None and dry_run is None else TaskHeaders(task_id, dry_run))
