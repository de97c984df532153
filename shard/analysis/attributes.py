"""``localizedAttributes``: which locales apply to a field (search.md §6.10)."""

from __future__ import annotations

from common.settings.patterns import pattern_matches
from shard.analysis.config import LocalizedRule


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
