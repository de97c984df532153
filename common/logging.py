"""Structured logging shared by every process.

Every line names the process that wrote it (``gateway``, ``scheduler``, ``shard-0``…) because the
launcher interleaves the output of all children on one stream, and its logger (the module), which is
the target ``/logs/stream`` and ``/logs/stderr`` filter on (``common/log_filter.py``).

Two sinks: stderr, and at most one stream listener (``/logs/stream``, through ``start_stream``). Each
has its own target filter, changeable at runtime. A call below every sink's lowest threshold returns
before structlog builds anything, so debug calls cost one comparison while nobody asks for them.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

import orjson
import structlog

from common.log_filter import OFF, TRACE, LogFilter

logging.addLevelName(TRACE, "TRACE")

_LEVELS = {
    "OFF": OFF,
    "ERROR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": TRACE,
}
LOG_MODES = ("human", "json")


def level_number(name: str) -> int:
    """Map a ``--log-level`` value (``OFF``…``TRACE``) to a stdlib level number."""
    return _LEVELS[name.upper()]


class _Sink(logging.Filter):
    """A handler's target filter: a record passes when its logger's threshold lets its level through."""

    def __init__(self, target: LogFilter) -> None:
        super().__init__()
        self.target = target

    def filter(self, record: logging.LogRecord) -> bool:
        return self.target.passes(record.name, record.levelno)


class _Routing:
    """The process's handlers (stderr, the stream if any) and the lowest level either takes."""

    def __init__(self) -> None:
        self.lowest = logging.INFO
        self.stderr: logging.Handler | None = None
        self.stream: logging.Handler | None = None
        self.shared: list[Any] = []

    def update(self) -> None:
        handlers = [h for h in (self.stderr, self.stream) if h is not None]
        self.lowest = min((_target(h).lowest for h in handlers), default=OFF)
        logging.getLogger().setLevel(self.lowest)


def _target(handler: logging.Handler) -> LogFilter:
    sink = handler.filters[0]
    assert isinstance(sink, _Sink)
    return sink.target


_routing = _Routing()


class _FilteringLogger(structlog.stdlib.BoundLogger):
    """Drops a call below every sink's threshold before any processor runs."""

    def debug(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        return None if _routing.lowest > logging.DEBUG else super().debug(event, *args, **kw)

    def info(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        return None if _routing.lowest > logging.INFO else super().info(event, *args, **kw)

    def warning(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        return None if _routing.lowest > logging.WARNING else super().warning(event, *args, **kw)

    warn = warning

    def error(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        return None if _routing.lowest > logging.ERROR else super().error(event, *args, **kw)

    def exception(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        return None if _routing.lowest > logging.ERROR else super().exception(event, *args, **kw)


def enabled(level: int) -> bool:
    """Whether some sink may take a record of ``level`` (for a log call costly to prepare)."""
    return _routing.lowest <= level


def configure_logging(process: str, level: str = "INFO", mode: str = "human") -> None:
    """Route structlog and stdlib logging (grpc, sanic) to stderr in the chosen mode."""
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_process(process),
    ]
    _routing.shared = shared
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=_FilteringLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_formatter(mode, stream=False))
    handler.addFilter(_Sink(LogFilter(level_number(level), (), level.lower())))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    _routing.stderr, _routing.stream = handler, None
    _routing.update()


def set_stderr_filter(target: LogFilter) -> None:
    """What goes to stderr from now on (``POST /logs/stderr``)."""
    if _routing.stderr is not None:
        _routing.stderr.filters[:] = [_Sink(target)]
    _routing.update()


def start_stream(target: LogFilter, mode: str, sink: Callable[[bytes], None]) -> Callable[[], None]:
    """Send every record passing ``target`` to ``sink`` as one rendered line (no newline), replacing
    any stream started before; returns what stops this one. ``sink`` may be called from any thread
    that logs, and must not log."""
    stop_stream()
    handler = _LineHandler(sink)
    handler.setFormatter(_formatter(mode, stream=True))
    handler.addFilter(_Sink(target))
    logging.getLogger().addHandler(handler)
    _routing.stream = handler

    def stop() -> None:
        if _routing.stream is handler:
            stop_stream()

    _routing.update()
    return stop


def stop_stream() -> None:
    if _routing.stream is not None:
        logging.getLogger().removeHandler(_routing.stream)
        _routing.stream = None
    _routing.update()


class _LineHandler(logging.Handler):
    def __init__(self, sink: Callable[[bytes], None]) -> None:
        super().__init__()
        self._sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._sink(self.format(record).encode())
        except Exception:  # a broken listener must never break the code that logs
            self.handleError(record)


def _formatter(mode: str, stream: bool) -> logging.Formatter:
    renderer: Any
    if mode == "json":
        renderer = _json_line if stream else structlog.processors.JSONRenderer()
        chain = [structlog.processors.format_exc_info, renderer]
    else:
        # Plain tracebacks whatever is installed: with `rich` present (a test dependency brings it) structlog
        # renders every frame's locals, which took the gateway 90 s for one deeply nested request body.
        chain = [
            structlog.dev.ConsoleRenderer(
                colors=False, pad_event_to=0, exception_formatter=structlog.dev.plain_traceback
            )
        ]
    return structlog.stdlib.ProcessorFormatter(
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *chain],
        foreign_pre_chain=_routing.shared,
    )


def _json_line(_logger: Any, _method: str, event: dict[str, Any]) -> str:
    """A stream's JSON line in the reference's shape (``timestamp``, upper-case ``level``, ``fields``
    with the ``message``, ``target``), plus the ``process`` that wrote it."""
    fields = {"message": event.pop("event", None)}
    timestamp = event.pop("timestamp", None)
    level = str(event.pop("level", "")).upper()
    target = event.pop("logger", None)
    process = event.pop("process", None)
    fields.update(event)
    line = {"timestamp": timestamp, "level": level, "fields": fields, "target": target, "process": process}
    return orjson.dumps(line, default=str).decode()


def _add_process(process: str) -> Any:
    def add(_logger: Any, _method: str, event: dict[str, Any]) -> dict[str, Any]:
        event.setdefault("process", process)
        return event

    return add


def get_logger(name: str | None = None) -> Any:
    return structlog.get_logger(name)
