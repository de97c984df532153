"""Attribute patterns of the settings (filterable, searchable, localized attributes; search.md §6.3)."""

from __future__ import annotations


def pattern_matches(pattern: str, field: str) -> bool:
    """Meilisearch attribute patterns: ``*``, ``prefix*``, ``*suffix``, ``*infix*`` or an exact name.

    An exact name also covers the fields nested under it (``author`` matches ``author.name``).
    """
    if pattern == "*":
        return True
    if len(pattern) > 1 and pattern[0] == "*" and pattern[-1] == "*":
        return pattern[1:-1] in field
    if pattern[:1] == "*":
        return field.endswith(pattern[1:])
    if pattern[-1:] == "*":
        return field.startswith(pattern[:-1])
    return field == pattern or field.startswith(pattern + ".")
