"""Date-times and durations in the contract's formats (core.md §1.4).

Times are kept as integer nanoseconds since the epoch (UTC): exact, cheap to compare and to filter on.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

_NS = 1_000_000_000
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def now_ns() -> int:
    return time.time_ns()


def format_datetime(ns: int) -> str:
    """RFC 3339 in UTC with ``Z``; fractional seconds only when non-zero, trailing zeros trimmed."""
    seconds, fraction = divmod(ns, _NS)
    text = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if fraction:
        text += "." + f"{fraction:09d}".rstrip("0")
    return text + "Z"


def format_duration(ns: int) -> str | None:
    """ISO-8601 subset: ``P[nD]T{s}S`` with 3, 6 or 9 fraction digits, whichever is exact."""
    if ns < 0:
        return None
    days, rest = divmod(ns, 86_400 * _NS)
    seconds, fraction = divmod(rest, _NS)
    text = "P" + (f"{days}D" if days else "")
    if rest or not days:
        if fraction == 0:
            text += f"T{seconds}S"
        else:
            digits = 3 if fraction % 1_000_000 == 0 else 6 if fraction % 1000 == 0 else 9
            text += f"T{seconds}.{fraction // 10 ** (9 - digits):0{digits}d}S"
    return text


def parse_filter_date(text: str, *, after: bool) -> int:
    """A task-filter bound in ns. Date-only: ``before`` is that day 00:00Z, ``after`` the next day's.

    Raises ``ValueError`` for anything that is neither ``YYYY-MM-DD`` nor RFC 3339.
    """
    if _DATE_ONLY.match(text):
        day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
        if after:
            day += timedelta(days=1)
        return int(day.timestamp()) * _NS
    return parse_rfc3339(text)


_RFC3339 = re.compile(r"^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$")


def parse_rfc3339(text: str) -> int:
    match = _RFC3339.match(text)
    if not match:
        raise ValueError(text)
    day, clock, fraction, zone = match.groups()
    offset = "+00:00" if zone in ("Z", "z") else zone
    moment = datetime.fromisoformat(f"{day}T{clock}{offset}")
    return int(moment.timestamp()) * _NS + int((fraction or "0").ljust(9, "0"))
