"""Structured logging shared by every process.

Every line names the process that wrote it (``gateway``, ``scheduler``, ``shard-0``…) because the
launcher interleaves the output of all children on one stream.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

TRACE = 5
logging.addLevelName(TRACE, "TRACE")

_LEVELS = {
    "OFF": logging.CRITICAL + 10,
    "ERROR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": TRACE,
}


def level_number(name: str) -> int:
    """Map a ``--log-level`` value (``OFF``…``TRACE``) to a stdlib level number."""
    return _LEVELS[name.upper()]


def configure_logging(process: str, level: str = "INFO", mode: str = "human") -> None:
    """Route structlog and stdlib logging (grpc, sanic) to stderr in the chosen mode."""
    threshold = level_number(level)
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if mode == "json"
        else structlog.dev.ConsoleRenderer(colors=False, pad_event_to=0)
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_process(process),
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=shared,
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(threshold)


def _add_process(process: str) -> Any:
    def add(_logger: Any, _method: str, event: dict[str, Any]) -> dict[str, Any]:
        event.setdefault("process", process)
        return event

    return add


def get_logger(name: str | None = None) -> Any:
    return structlog.get_logger(name)
