"""Byte sizes as people write them (``100MB``, ``1.5 GiB``) and as error messages show them.

Decimal units (KB, MB…) are powers of 1000 and binary units (KiB, MiB…) powers of 1024, as in
Meilisearch; unit names are case-insensitive, so ``100Mb`` is 100 megabytes, not megabits.
"""

from __future__ import annotations

import re
from decimal import Decimal

_UNITS: dict[str, int] = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]*)", re.IGNORECASE)
_BINARY = (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024))
_DECIMAL = (("TB", 1000**4), ("GB", 1000**3), ("MB", 1000**2), ("KB", 1000))


def parse_size(value: str | int) -> int:
    """Return the number of bytes; fractions of a byte (``1.5 B``) are rounded down.

    Raises ``ValueError`` with a message fit to show after the option name.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a size such as `100MB` or `2GiB`, got the boolean `{value}`")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a size cannot be negative, got `{value}`")
        return value
    match = _SIZE.fullmatch(value.strip())
    if match is None or match.group(2).lower() not in _UNITS:
        raise ValueError(
            f"expected a size such as `100MB`, `512KiB` or `2 GiB` "
            f"(units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), got `{value}`"
        )
    number, unit = match.groups()
    return int(Decimal(number) * _UNITS[unit.lower()])


def format_size(size: int) -> str:
    """Render exactly, in the largest unit that divides ``size``: ``10 MiB``, ``100 MB``, ``3 B``.

    Binary units win when both fit, so sizes configured as ``…MiB`` read back the same way.
    """
    for units in (_BINARY, _DECIMAL):
        for name, factor in units:
            if size and size % factor == 0:
                return f"{size // factor} {name}"
    return f"{size} B"


def human_size(size: int) -> str:
    """The engine's human-readable size: the largest binary unit it reaches, two decimals at most
    (``104 KiB``, ``113.89 MiB``, ``93 B``), as in compaction task details."""
    for name, factor in _BINARY:
        if size >= factor:
            return f"{size / factor:.2f}".rstrip("0").rstrip(".") + f" {name}"
    return f"{size} B"
