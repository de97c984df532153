"""Log target filters in the reference's syntax (core.md §3.13: ``info``,
``shard=debug,scheduler::executor=trace``), for ``/logs/stream``, ``/logs/stderr`` and every process.

A filter is comma-separated directives, each ``target=level``, a bare level (the default for every
target), or a bare target (all its levels). A record's logger name (``shard.server``,
``scheduler.executor``, ``sanic.error``; ``::`` in a directive stands for ``.``) takes the level of the
longest directive target it starts with, else the default, else nothing passes. A span part
(``target[span{field}]=level``) is accepted, as the reference does, but Sift logs no spans, so such a
directive matches nothing. Errors are worded as the reference's.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

TRACE = 5
OFF = logging.CRITICAL + 10
_NAMED = {
    "off": OFF,
    "error": logging.ERROR,
    "warn": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
    "trace": TRACE,
}
_NUMBERED = (OFF, logging.ERROR, logging.WARNING, logging.INFO, logging.DEBUG, TRACE)
_EMPTY = (
    "Empty string is not a valid target. If you want to get no logs use `OFF`. Usage: `info`, "
    "`meilisearch=info`, or you can write multiple filters in one target: `index_scheduler=info,milli=trace`"
)
_BAD_LEVEL = (
    'error parsing level filter: expected one of "off", "error", "warn", "info", "debug", "trace", '
    "or a number 0-5"
)


def _level(text: str) -> int | None:
    lowered = text.strip().lower()
    if lowered in _NAMED:
        return _NAMED[lowered]
    if lowered.isdigit() and int(lowered) < len(_NUMBERED):
        return _NUMBERED[int(lowered)]
    return None


class InvalidTarget(ValueError):
    """The reference's reason a filter is refused (the route words it ``Invalid value at `.target`: …``)."""


@dataclass
class LogFilter:
    """Parsed once; ``threshold`` is memoised per logger name (a process has a few dozen)."""

    default: int | None
    targets: tuple[tuple[str, int], ...]
    """``(target, level)``, longest target first."""
    text: str = "info"
    _cache: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, text: str) -> LogFilter:
        """``InvalidTarget`` with the reference's reason for an empty or malformed filter."""
        if not text:
            raise InvalidTarget(_EMPTY)
        default: int | None = None
        targets: dict[str, int] = {}
        for directive in (part.strip() for part in text.split(",")):
            if not directive:
                continue
            if directive.count("=") > 1 and "[" not in directive:
                raise InvalidTarget(
                    "invalid filter directive: too many '=' in filter directive, expected 0 or 1"
                )
            target, equals, level_text = directive.rpartition("=")
            if not equals:
                level = _level(directive)
                if level is not None:
                    default = level
                else:
                    targets[directive.replace("::", ".")] = TRACE
                continue
            level = _level(level_text)
            if level is None:
                raise InvalidTarget(_BAD_LEVEL)
            if target:
                targets[target.replace("::", ".")] = level
            else:
                default = level
        ordered = tuple(sorted(targets.items(), key=lambda item: -len(item[0])))
        return cls(default, ordered, text)

    def threshold(self, name: str) -> int:
        """The lowest level a record of logger ``name`` must have to pass (``OFF``: none passes)."""
        found = self._cache.get(name)
        if found is None:
            found = next((level for target, level in self.targets if name.startswith(target)), None)
            if found is None:
                found = OFF if self.default is None else self.default
            self._cache[name] = found
        return found

    @property
    def lowest(self) -> int:
        """The lowest threshold any logger can have: below it, a call need not be built at all."""
        return min([level for _, level in self.targets] + [OFF if self.default is None else self.default])

    def passes(self, name: str, level: int) -> bool:
        return level >= self.threshold(name)
