"""What an index's settings make of each field: the flags of the field listing (core.md §3.15).

Two matching rules, as the reference engine applies them (checked against it): attribute *lists*
(``displayedAttributes``, ``searchableAttributes``, ``sortableAttributes`` and filterable rules written
as plain strings) cover a name and the fields nested under it; attribute *patterns* (object filterable
rules, ``localizedAttributes``, the listing's own ``attributePatterns``) match a name only as written or
through ``*``. ``distinctAttribute``, custom ranking rules and ``sortFacetValuesBy`` name one field
exactly. ``_geo``, ``_geojson`` and ``_vectors`` (and what they hold) are never searchable nor distinct.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from common.filter.permissions import Features, rule_features, rule_patterns
from common.locales import iso639_3
from common.settings.patterns import pattern_matches

RESERVED_FIELDS: Final = ("_geo", "_geojson", "_vectors")
"""Top-level fields whose values (points, shapes, embeddings) are never words: the indexer skips them."""
_NOT_FILTERABLE: Final = Features(facet_search=False, equality=False, comparison=False)
FILTER_FLAGS: Final = ("displayed", "searchable", "sortable", "distinct", "rankingRule", "filterable")
"""The listing filter's boolean criteria, each naming the flag object whose ``enabled`` it tests."""


def covers(name: str, field: str) -> bool:
    """An attribute list's entry: the field itself or a field nested under it."""
    return field == name or field.startswith(name + ".")


def pattern_selects(pattern: str, field: str) -> bool:
    """An attribute pattern: the name as written, or ``*`` wildcards (no nested fields)."""
    return pattern_matches(pattern, field) if "*" in pattern else pattern == field


class FieldCapabilities:
    """The effective settings (the ``GET /settings`` shape), read once for a whole listing."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self._displayed = _attribute_list(settings["displayedAttributes"])
        self._searchable = _attribute_list(settings["searchableAttributes"])
        self._sortable: Sequence[str] = settings["sortableAttributes"]
        self._filterable: Sequence[Any] = settings["filterableAttributes"]
        self._distinct: str | None = settings["distinctAttribute"]
        self._sort_by: Mapping[str, str] = settings["faceting"]["sortFacetValuesBy"]
        self._localized: Sequence[Mapping[str, Any]] = settings["localizedAttributes"] or ()
        self._orders: dict[str, str] = {}
        for rule in settings["rankingRules"]:
            name, colon, order = rule.rpartition(":")
            if colon and order in ("asc", "desc"):
                self._orders.setdefault(name, order)

    def describe(self, field: str) -> dict[str, Any]:
        """The field's entry in the listing, keys in the reference's order."""
        reserved = any(covers(name, field) for name in RESERVED_FIELDS)
        order = self._orders.get(field)
        features = self._features(field)
        return {
            "name": field,
            "displayed": {"enabled": _listed(self._displayed, field)},
            "searchable": {"enabled": not reserved and _listed(self._searchable, field)},
            "sortable": {"enabled": any(covers(name, field) for name in self._sortable)},
            "distinct": {"enabled": not reserved and field == self._distinct},
            "rankingRule": {"enabled": False} if order is None else {"enabled": True, "order": order},
            "filterable": {
                "enabled": features.facet_search or features.filterable,
                "sortBy": self._sort_by.get(field) or self._sort_by.get("*", "alpha"),
                "facetSearch": features.facet_search,
                "equality": features.equality,
                "comparison": features.comparison,
            },
            "localized": {"locales": self._locales(field)},
        }

    def _features(self, field: str) -> Features:
        """The first filterable rule matching the field decides, as when filtering."""
        for rule in self._filterable:
            matches = covers if isinstance(rule, str) else pattern_selects
            if any(matches(pattern, field) for pattern in rule_patterns(rule)):
                return rule_features(rule)
        return _NOT_FILTERABLE

    def _locales(self, field: str) -> list[str]:
        for rule in self._localized:
            if any(pattern_selects(pattern, field) for pattern in rule["attributePatterns"]):
                return [iso639_3(locale).capitalize() for locale in rule["locales"]]
        return []


def _attribute_list(attributes: Sequence[str]) -> Sequence[str] | None:
    """None for every field (``["*"]``)."""
    return None if "*" in attributes else attributes


def _listed(attributes: Sequence[str] | None, field: str) -> bool:
    return attributes is None or any(covers(name, field) for name in attributes)


def keeps(entry: Mapping[str, Any], criteria: Mapping[str, Any]) -> bool:
    """Whether a listing entry passes the request's ``filter`` (every given criterion, ANDed)."""
    patterns = criteria.get("attributePatterns")
    if patterns is not None and not any(pattern_selects(p, entry["name"]) for p in patterns):
        return False
    return all(
        criteria.get(flag) is None or entry[flag]["enabled"] == criteria[flag] for flag in FILTER_FLAGS
    )
