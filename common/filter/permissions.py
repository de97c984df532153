"""Which filters an index allows (search.md §4.3, §4.4, §6.3): filterable rules, features, feature flags.

``filterableAttributes`` mixes legacy strings (every feature) and ``{attributePatterns, features}`` objects; a
field follows the first rule that matches it. ``matching_rule`` is what the shards also use to decide which
fields get facet structures. Checks run in the reference's order: every field must be filterable first, then
operators and geo filters are checked condition by condition.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from common.errors import ApiError, index_prefix
from common.filter.ast import (
    And,
    Between,
    Compare,
    Contains,
    Filter,
    Foreign,
    GeoBoundingBox,
    GeoPolygon,
    GeoRadius,
    In,
    Not,
    Or,
    Span,
    Token,
    VectorsExists,
)
from common.filter.errors import FilterError, located
from common.settings.patterns import pattern_matches

Rule: TypeAlias = str | Mapping[str, Any]
"""One ``filterableAttributes`` entry as the settings store it."""

_EQUALITY_OPS: Final = frozenset({"=", "!="})


@dataclass(frozen=True, slots=True)
class Features:
    """What a rule allows on the fields it matches."""

    facet_search: bool
    equality: bool
    comparison: bool

    @property
    def filterable(self) -> bool:
        return self.equality or self.comparison

    def operators(self) -> list[str]:
        """The operators it allows, in the reference's order (for error notes)."""
        if not self.filterable:
            return []
        allowed = ["OR", "AND", "NOT"]
        if self.equality:
            allowed += ["=", "!=", "IN"]
        if self.comparison:
            allowed += ["<", ">", "<=", ">=", "TO"]
        return [*allowed, "IS EMPTY", "IS NULL", "EXISTS"]


LEGACY_FEATURES: Final = Features(facet_search=True, equality=True, comparison=True)


def rule_features(rule: Rule) -> Features:
    """A string rule allows everything; an object rule's omitted features take the contract's defaults."""
    if isinstance(rule, str):
        return LEGACY_FEATURES
    features = rule.get("features") or {}
    filters = features.get("filter") or {}
    return Features(
        facet_search=bool(features.get("facetSearch", False)),
        equality=bool(filters.get("equality", True)),
        comparison=bool(filters.get("comparison", False)),
    )


def rule_patterns(rule: Rule) -> list[str]:
    return [rule] if isinstance(rule, str) else list(rule.get("attributePatterns", []))


def matching_rule(rules: Sequence[Rule], field: str, nested: bool = False) -> tuple[int, Features] | None:
    """The first rule matching ``field`` (its index and features), or None.

    A string rule's name covers the fields nested under it (``other`` makes ``other.a`` filterable);
    an object rule's pattern without ``*`` names one field only, as the reference answers
    (``{"attributePatterns": ["other"]}``: ``other.a`` is not filterable, with ``oth*`` it is).
    ``nested``: object rules' names cover nested fields too, as the reference checks a ``facets``
    entry (``other.a`` is accepted there, and designates nothing).
    """
    for index, rule in enumerate(rules):
        if isinstance(rule, str) or nested:
            matched = any(pattern_matches(pattern, field) for pattern in rule_patterns(rule))
        else:
            matched = any(
                pattern_matches(pattern, field) if "*" in pattern else pattern == field
                for pattern in rule_patterns(rule)
            )
        if matched:
            return index, rule_features(rule)
    return None


def check_filter(
    tree: Filter,
    rules: Sequence[Rule],
    index_uid: str | None,
    *,
    field_exists: Callable[[str], bool] | None = None,
) -> None:
    """Raise the FilterError the reference gives ``tree`` on this index, if any.

    ``index_uid`` opens the messages (search and task errors); None for document reads, which name none.

    ``field_exists`` tells whether some document has the field: the reference checks operators only on
    fields it knows (an unknown field matches nothing); without it every field is taken as known.
    """
    for field in _fields(tree):
        match = matching_rule(rules, field.text)
        if match is None or not match[1].filterable:
            raise _not_filterable(field.text, field.span, rules, index_uid)
    for node in _conditions(tree):
        if isinstance(node, (Compare, Between, In)):
            if field_exists is None or field_exists(node.field.text):
                _check_operator(node, rules, index_uid)
        elif isinstance(node, (GeoRadius, GeoBoundingBox)):
            if not any(rule in ("_geo", "_geojson") for rule in rules):
                raise _not_filterable("_geo/_geojson", node.span, rules, index_uid)
        elif isinstance(node, GeoPolygon) and "_geojson" not in rules:
            raise _not_filterable("_geojson", node.span, rules, index_uid)


def check_experimental(
    tree: Filter, *, contains_filter: bool, multimodal: bool, foreign_keys: bool = False
) -> None:
    """``feature_not_enabled``: ``CONTAINS`` needs ``containsFilter``, ``_vectors`` needs ``multimodal``,
    ``_foreign(..)`` needs ``foreignKeys``.

    ``STARTS WITH`` is not gated (search.md §4.3).
    """
    for node in _conditions(tree):
        if isinstance(node, Foreign) and not foreign_keys:
            raise ApiError(
                "feature_not_enabled",
                located(
                    "using a foreign filter requires enabling the `foreign_keys` experimental feature. See"
                    " https://github.com/orgs/meilisearch/discussions/873",
                    node.field.span,
                ),
            )
        if isinstance(node, Contains) and not contains_filter and node.keyword is not None:
            raise ApiError(
                "feature_not_enabled",
                located(
                    "Using `CONTAINS` in a filter requires enabling the `contains filter` experimental"
                    " feature. See https://github.com/orgs/meilisearch/discussions/763",
                    node.keyword,
                ),
            )
        if isinstance(node, VectorsExists) and not multimodal:
            raise ApiError(
                "feature_not_enabled",
                located(
                    "Using a vector filter requires enabling the `multimodal` experimental feature. See"
                    " https://github.com/orgs/meilisearch/discussions/846",
                    node.span,
                ),
            )


def _conditions(tree: Filter) -> Iterator[Filter]:
    """The leaves in the order they are written (and evaluated)."""
    if isinstance(tree, (And, Or)):
        for child in tree.children:
            yield from _conditions(child)
    elif isinstance(tree, Not):
        yield from _conditions(tree.child)
    else:
        yield tree


def _fields(tree: Filter) -> Iterator[Token]:
    """Fields the index's own rules must allow (a ``_foreign`` field is a key into another index)."""
    for node in _conditions(tree):
        field = None if isinstance(node, Foreign) else getattr(node, "field", None)
        if isinstance(field, Token):
            yield field


class OperatorNotAllowed(FilterError):
    """An operator the field's rule does not allow: ``invalid_search_filter`` on every route, document
    reads and delete-by-filter tasks included (search.md §4.4; the reference answers so)."""

    def api_error(self, code: str) -> ApiError:
        return ApiError("invalid_search_filter", self.message)


def _check_operator(node: Compare | Between | In, rules: Sequence[Rule], index_uid: str | None) -> None:
    match = matching_rule(rules, node.field.text)
    if match is None:
        return
    index, features = match
    if isinstance(node, In):
        # IN is evaluated as one `=` per value, which is the operator the reference names.
        op, needs = "=", "equality"
        if not node.values or features.equality:
            return
    elif isinstance(node, Compare) and node.op in _EQUALITY_OPS:
        op, needs = node.op, "equality"
        if features.equality:
            return
    else:
        op, needs = ("TO" if isinstance(node, Between) else node.op), "comparison"
        if features.comparison:
            return
    field = node.field.text
    raise OperatorNotAllowed(
        f"{index_prefix(index_uid)}Filter operator `{op}` is not allowed for the attribute `{field}`.\n"
        f"  - Note: allowed operators: {', '.join(features.operators())}.\n"
        f"  - Note: field `{field}` matched rule #{index} in `filterableAttributes`\n"
        f"  - Hint: enable {needs} in rule #{index} by modifying the features.filter object\n"
        f"  - Hint: prepend another rule matching `{field}` with appropriate filter features before"
        f" rule #{index}"
    )


def filterable_patterns(rules: Sequence[Rule]) -> list[str]:
    """Patterns of the rules that allow filtering, sorted and deduplicated as error messages list them."""
    return sorted(
        {pattern for rule in rules if rule_features(rule).filterable for pattern in rule_patterns(rule)}
    )


def _not_filterable(attribute: str, span: Span, rules: Sequence[Rule], index_uid: str | None) -> FilterError:
    patterns = filterable_patterns(rules)
    available = (
        "Available filterable attribute patterns are: " + ", ".join(f"`{p}`" for p in patterns) + "."
        if patterns
        else "This index does not have configured filterable attributes."
    )
    sentence = f"{index_prefix(index_uid)}Attribute `{attribute}` is not filterable. {available}"
    return FilterError(located(sentence, span))
