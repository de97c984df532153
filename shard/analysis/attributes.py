"""``localizedAttributes``: which locales apply to a field (search.md §6.10)."""

from __future__ import annotations

from shard.analysis.config import LocalizedRule


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


def paths_related(first: str, second: str) -> bool:
    """Whether one dotted path is the other or nested in it."""
    return first == second or second.startswith(first + ".") or first.startswith(second + ".")


class LocalizedAttributes:
    """First matching rule wins; answers are memoised because the same fields come back in every document."""

    def __init__(self, rules: tuple[LocalizedRule, ...]) -> None:
        self._rules = rules
        self._by_field: dict[str, tuple[str, ...]] = {}

    def locales_for(self, field: str) -> tuple[str, ...]:
        locales = self._by_field.get(field)
        if locales is None:
            locales = self._by_field[field] = self._first_match(field)
        return locales

    def _first_match(self, field: str) -> tuple[str, ...]:
        for patterns, locales in self._rules:
            if any(pattern_matches(pattern, field) for pattern in patterns):
                return locales
        return ()
