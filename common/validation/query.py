"""Declarative validation of query-string parameters with deserr's wording (core.md §1.10).

Input is what web frameworks hand over: each name mapped to its raw values, of which the last one counts.
Parameters are checked in the order they appear in that mapping; the first problem wins, then required
parameters that are absent are reported in schema order.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, Final

from common.errors import ERROR_CODES, ApiError
from common.validation.body import Check
from common.validation.describe import did_you_mean, ticked

STAR: Final = "*"
"""Returned for a parameter given as ``*`` ("no filter" / "everything") when the param allows it."""

# Rust's unsigned `from_str`: ASCII digits with an optional leading `+`, nothing else (no spaces, no `_`).
_UNSIGNED = re.compile(r"\+?[0-9]+")
_USIZE_MAX: Final = 2**64 - 1


class QueryKind(enum.Enum):
    POSITIVE_INTEGER = enum.auto()
    BOOLEAN = enum.auto()
    STRING = enum.auto()
    STRING_LIST = enum.auto()
    """Comma-separated, items trimmed."""
    INTEGER_LIST = enum.auto()
    """Comma-separated positive integers, items trimmed."""


@dataclass(frozen=True)
class Param:
    kind: QueryKind
    _: KW_ONLY
    code: str
    required: bool = False
    missing_code: str = "bad_request"
    choices: tuple[str, ...] = ()
    """Allowed values of a STRING parameter, in the order the error message lists them."""
    star: bool = False
    """For lists, a ``*`` item makes the whole value ``STAR``; for strings, the exact value ``*`` does
    (task date bounds: ``*`` = no bound)."""
    maximum: int = _USIZE_MAX
    """Largest accepted integer (e.g. 2**32 - 1 for task uids); larger ones fail to parse, as in Rust."""
    check: Check | None = None
    """Semantic check of the parsed value, or of each list item; a problem is reported as
    ``Invalid value in parameter `name`: {problem}``."""

    def __post_init__(self) -> None:
        for code in (self.code, self.missing_code):
            if code not in ERROR_CODES:
                raise ValueError(f"unknown error code {code!r}")
        if self.choices and self.kind is not QueryKind.STRING:
            raise ValueError("`choices` only applies to QueryKind.STRING")
        if self.star and self.kind not in (QueryKind.STRING, QueryKind.STRING_LIST, QueryKind.INTEGER_LIST):
            raise ValueError("`star` only applies to strings and lists")


class QuerySchema:
    """The parameters a route accepts; their order is the order of "expected one of" lists."""

    def __init__(self, params: Mapping[str, Param]) -> None:
        self.params = dict(params)

    def validate(self, query: Mapping[str, Sequence[str]]) -> dict[str, Any]:
        """Parse the parameters that are present; raises the first problem as an ``ApiError``."""
        result: dict[str, Any] = {}
        for name, raw_values in query.items():
            param = self.params.get(name)
            if param is None:
                names = list(self.params)
                raise ApiError(
                    "bad_request",
                    f"Unknown parameter `{name}`: {did_you_mean(name, names)}expected one of {ticked(names)}",
                )
            if raw_values:
                result[name] = _parse(name, param, raw_values[-1])
        for name, param in self.params.items():
            if param.required and name not in result:
                raise ApiError(param.missing_code, f"Missing parameter `{name}`")
        return result


def _invalid(name: str, param: Param, problem: str) -> ApiError:
    return ApiError(param.code, f"Invalid value in parameter `{name}`: {problem}")


def _integer(name: str, param: Param, raw: str) -> int:
    if _UNSIGNED.fullmatch(raw) and int(raw) <= param.maximum:
        return int(raw)
    raise _invalid(name, param, f"could not parse `{raw}` as a positive integer")


def _parse(name: str, param: Param, raw: str) -> Any:
    kind = param.kind
    if kind in (QueryKind.STRING_LIST, QueryKind.INTEGER_LIST):
        items = [item.strip() for item in raw.split(",")]
        if param.star and STAR in items:
            return STAR
        values: list[Any] = (
            [_integer(name, param, item) for item in items] if kind is QueryKind.INTEGER_LIST else items
        )
        for value in values:
            _check(name, param, value)
        return values
    if param.star and raw == STAR:
        return STAR
    parsed: Any = raw
    if kind is QueryKind.POSITIVE_INTEGER:
        parsed = _integer(name, param, raw)
    elif kind is QueryKind.BOOLEAN:
        if raw not in ("true", "false"):
            raise _invalid(
                name, param, f"could not parse `{raw}` as a boolean, expected either `true` or `false`"
            )
        parsed = raw == "true"
    elif param.choices and raw not in param.choices:
        raise ApiError(
            param.code,
            f"Unknown value `{raw}` for parameter `{name}`: {did_you_mean(raw, param.choices)}"
            f"expected one of {ticked(param.choices)}",
        )
    _check(name, param, parsed)
    return parsed


def _check(name: str, param: Param, value: Any) -> None:
    if param.check is not None:
        problem = param.check(value)
        if problem is not None:
            raise _invalid(name, param, problem)
