"""Index uid patterns of API keys and tenant tokens (core.md §3.6): ``*``, an exact uid, or ``prefix*``.

Both the gateway (authorising a request) and the scheduler (hiding tasks, batches and indexes a key
may not see) match uids against the same patterns, so the rule lives here once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_PATTERN = re.compile(r"^[A-Za-z0-9_-]*\*?$")
_INDEX_UID = re.compile(r"^[A-Za-z0-9_-]+$")
_MAX_INDEX_UID_BYTES = 400


def is_valid_index_uid(uid: str) -> bool:
    """The index uid rule (core.md §5), which dynamic search rule uids follow too."""
    return bool(_INDEX_UID.match(uid)) and len(uid.encode()) <= _MAX_INDEX_UID_BYTES


def is_valid_pattern(pattern: str) -> bool:
    """A valid uid optionally followed by one ``*`` (``*`` alone included)."""
    return bool(pattern) and bool(_PATTERN.match(pattern)) and len(pattern.encode()) <= 401


def pattern_matches(pattern: str, uid: str) -> bool:
    if pattern.endswith("*"):
        return uid.startswith(pattern[:-1])
    return uid == pattern


class IndexPatterns:
    """A set of patterns; ``allows`` is a set lookup for exact uids and a prefix test for the rest."""

    __slots__ = ("all", "exact", "patterns", "prefixes")

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(patterns)
        self.all = "*" in self.patterns
        self.exact = frozenset(p for p in self.patterns if not p.endswith("*"))
        self.prefixes = tuple(p[:-1] for p in self.patterns if p.endswith("*"))

    def allows(self, uid: str) -> bool:
        return self.all or uid in self.exact or uid.startswith(self.prefixes)
