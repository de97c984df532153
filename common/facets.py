"""Which fields a ``facets`` list or a ``facetName`` designates, and the contract's errors for them.

Shared by shards (which know the index's fields and settings) and the gateway (which answers for an
index no shard has seen yet, whose settings are the defaults). See search.md §1.7, §3.1, §6.10.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from common.errors import ApiError
from common.filter.permissions import Rule, filterable_patterns, matching_rule, rule_features, rule_patterns
from common.settings.patterns import pattern_matches

DEFAULT_MAX_VALUES = 100
ALPHA, COUNT = "alpha", "count"


def check_facets(patterns: Sequence[str], rules: Sequence[Rule]) -> None:
    """``invalid_search_facets`` for the first entry that designates no filterable field."""
    for pattern in patterns:
        if pattern == "*" and filterable_patterns(rules):
            continue
        match = matching_rule(rules, pattern, nested=True)
        if match is not None and match[1].filterable:
            continue
        if "*" in pattern and any(_overlap(pattern, p) for p in filterable_patterns(rules)):
            continue
        raise ApiError(
            "invalid_search_facets", "Invalid facet distribution: " + _not_filterable(pattern, rules, match)
        )


def _overlap(pattern: str, rule_pattern: str) -> bool:
    """Whether a facet pattern with ``*`` and a rule's pattern can name a common field."""
    if "*" in rule_pattern:
        return (
            rule_pattern == "*"
            or pattern_matches(pattern, rule_pattern.strip("*"))
            or pattern_matches(rule_pattern, pattern.strip("*"))
        )
    return pattern_matches(pattern, rule_pattern)


def _not_filterable(pattern: str, rules: Sequence[Rule], match: tuple[int, Any] | None) -> str:
    if match is not None:
        rule = match[0]
        return (
            f"Attribute `{pattern}` matched rule #{rule} in filterableAttributes, but this rule does not"
            f" enable filtering.\nHint: enable filtering in rule #{rule} by modifying the features.filter"
            f" object\nHint: prepend another rule matching `{pattern}` with appropriate filter features"
            f" before rule #{rule}"
        )
    available = filterable_patterns(rules)
    if not available:
        return (
            f"Pattern `{pattern}` is not filterable. This index does not have configured filterable"
            " attributes."
        )
    return (
        f"Pattern `{pattern}` is not filterable. Available filterable attributes patterns are:"
        f" `{', '.join(available)}`."
    )


def selected_fields(patterns: Sequence[str], rules: Sequence[Rule], fields: Iterable[str]) -> list[str]:
    """The index's fields a requested pattern names (exact names cover nested fields) and whose first
    matching rule enables filtering."""
    selected = []
    for field in fields:
        if not any(pattern_matches(pattern, field) for pattern in patterns):
            continue
        match = matching_rule(rules, field)
        if match is not None and match[1].filterable:
            selected.append(field)
    return selected


def check_facet_search(name: str, settings: Mapping[str, Any]) -> None:
    """``facet_search_disabled`` first (the index setting), then ``invalid_facet_search_facet_name``."""
    if not settings.get("facetSearch", True):
        raise ApiError("facet_search_disabled", "The facet search is disabled for this index")
    rules: Sequence[Rule] = settings.get("filterableAttributes") or []
    match = matching_rule(rules, name)
    if match is not None and match[1].facet_search:
        return
    hint = " To make it facet-searchable add it to the `filterableAttributes` index settings."
    if match is not None:
        rule = match[0]
        detail = (
            f"Note: this attribute matches rule #{rule} in filterableAttributes, but this rule does not"
            f" enable facetSearch.\nHint: enable facetSearch in rule #{rule} by adding"
            f' `"facetSearch": true` to the rule.\nHint: prepend another rule matching {name} with'
            f" facetSearch: true before rule #{rule}"
        )
    else:
        available = sorted(
            {p for rule in rules if rule_features(rule).facet_search for p in rule_patterns(rule)}
        )
        detail = (
            f"Available facet-searchable attributes patterns are: `{', '.join(available)}`.{hint}"
            if available
            else f"This index does not have configured facet-searchable attributes.{hint}"
        )
    raise ApiError("invalid_facet_search_facet_name", f"Attribute `{name}` is not facet-searchable. {detail}")


def facet_order(settings: Mapping[str, Any], field: str) -> str:
    """``sortFacetValuesBy``: the field's own entry, else ``*``, else alpha."""
    by = (settings.get("faceting") or {}).get("sortFacetValuesBy") or {}
    return str(by.get(field, by.get("*", ALPHA)))


def max_values(settings: Mapping[str, Any]) -> int:
    value = (settings.get("faceting") or {}).get("maxValuesPerFacet")
    return DEFAULT_MAX_VALUES if value is None else int(value)


def number_key(value: float) -> str:
    """A number as a distribution key: Rust's ``f64`` display (``1990``, ``2.5``, never an exponent)."""
    if value.is_integer():
        return str(int(value))
    text = repr(value)
    return format(Decimal(text), "f") if "e" in text else text
