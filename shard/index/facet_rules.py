"""Which document fields are faceted: those a ``filterableAttributes`` rule or ``sortableAttributes`` selects.

A field takes the first filterable rule that matches it (search.md §6.3); it is faceted when that rule
enables equality, comparison or facet search, or when it is sortable (sort reuses the same values).
Legacy string rules and sortable names match the field and its nested fields; object rules use
attribute patterns (``*``, ``prefix*``, ``*suffix``, ``*infix*``, exact names covering nested fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from shard.analysis.attributes import pattern_matches

Settings = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class _Rule:
    patterns: tuple[str, ...]
    legacy: bool
    faceted: bool


def _covers(name: str, path: str) -> bool:
    return path == name or path.startswith(name + ".")


def _rule(raw: str | dict[str, Any]) -> _Rule:
    if isinstance(raw, str):
        # Without `*` a legacy name matches as an exact pattern does, so both compare equal.
        return _Rule((raw,), "*" in raw, True)
    features = raw.get("features") or {}
    filters = features.get("filter") or {}
    faceted = bool(
        filters.get("equality", True) or filters.get("comparison", False) or features.get("facetSearch")
    )
    return _Rule(tuple(raw.get("attributePatterns") or ()), False, faceted)


def facet_settings(settings: Settings) -> tuple[Any, Any]:
    """What the stored facet values depend on: a change re-indexes them. Besides filterable rules, the
    fields whose values rank or deduplicate: sortable ones, custom ``field:asc|desc`` ranking rules and
    the distinct attribute (search.md §6 reindexing)."""
    ordered = set(settings.get("sortableAttributes") or [])
    for rule in settings.get("rankingRules") or []:
        field, _, order = rule.rpartition(":")
        if field and order in ("asc", "desc"):
            ordered.add(field)
    if settings.get("distinctAttribute"):
        ordered.add(settings["distinctAttribute"])
    return settings.get("filterableAttributes") or [], sorted(ordered)


class FacetedFields:
    """Answers per dotted path, memoised: the same paths come back in every document."""

    def __init__(self, settings: Settings) -> None:
        filterable, sortable = facet_settings(settings)
        self._rules = tuple(_rule(raw) for raw in filterable)
        self._sortable: tuple[str, ...] = tuple(sortable)
        self._names = tuple(p for rule in self._rules for p in rule.patterns) + self._sortable
        # A wildcard pattern may match a field at any depth, so extraction must look everywhere.
        self._wildcards = any("*" in p for rule in self._rules if not rule.legacy for p in rule.patterns)
        self._selected: dict[str, bool] = {}
        self._descend: dict[str, bool] = {}

    @property
    def none(self) -> bool:
        return not self._rules and not self._sortable

    def same_selection(self, other: FacetedFields) -> bool:
        """Whether both select the same paths: rule features matter only as faceted or not."""
        return (self._rules, self._sortable) == (other._rules, other._sortable)

    def covers(self, other: FacetedFields) -> bool:
        """A sufficient condition for every path ``other`` selects to be selected here: each of its
        faceted rules and sortable names is ours too, and none of our rules is unfaceted (so no
        earlier rule of ours can shadow one of them)."""
        if not all(rule.faceted for rule in self._rules):
            return False
        return set(other._sortable) <= set(self._sortable) and all(
            rule in self._rules for rule in other._rules if rule.faceted
        )

    def selects(self, path: str) -> bool:
        selected = self._selected.get(path)
        if selected is None:
            selected = self._selected[path] = self._first_rule_facets(path) or any(
                _covers(name, path) for name in self._sortable
            )
        return selected

    def may_select_below(self, path: str) -> bool:
        """Whether a field nested under ``path`` could be selected, so extraction must look inside."""
        below = self._descend.get(path)
        if below is None:
            below = self._descend[path] = self._wildcards or any(
                _covers(path, name) or _covers(name, path) for name in self._names
            )
        return below

    def _first_rule_facets(self, path: str) -> bool:
        for rule in self._rules:
            matches = (
                any(_covers(name, path) for name in rule.patterns)
                if rule.legacy
                else any(pattern_matches(pattern, path) for pattern in rule.patterns)
            )
            if matches:
                return rule.faceted
        return False


class FieldSelection(Protocol):
    """What extracting a document's facet values asks: which paths, and where to look inside."""

    @property
    def none(self) -> bool: ...

    def selects(self, path: str) -> bool: ...

    def may_select_below(self, path: str) -> bool: ...


class FacetChange:
    """How a settings change moves the faceted paths from ``old`` to ``new``. As a selection it
    selects the paths to index newly; ``dropped`` tells those whose values go."""

    def __init__(self, old: FacetedFields, new: FacetedFields) -> None:
        self.old = old
        self.new = new

    @property
    def none(self) -> bool:
        return self.old.covers(self.new)

    def selects(self, path: str) -> bool:
        return self.new.selects(path) and not self.old.selects(path)

    def may_select_below(self, path: str) -> bool:
        return self.new.may_select_below(path)

    def dropped(self, path: str) -> bool:
        return self.old.selects(path) and not self.new.selects(path)


def facet_change(previous: Settings, new: Settings) -> FacetChange | None:
    """None when both settings facet the same paths (e.g. only rule features changed): stored facet
    values depend on nothing else."""
    old, fields = FacetedFields(previous), FacetedFields(new)
    return None if old.same_selection(fields) else FacetChange(old, fields)
