"""Random filter trees and their string form, for property tests of the parser and of the evaluators.

``filter_trees(fields=..., values=...)`` draws trees over chosen field names and values (an evaluator test
passes the fields and values of its random documents); ``render`` writes a tree as a filter string that
parses back to the same tree, up to spans (``without_spans``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import strategies as st

from common.filter.ast import (
    And,
    Between,
    Compare,
    Contains,
    Exists,
    Filter,
    GeoBoundingBox,
    GeoPolygon,
    GeoRadius,
    In,
    IsEmpty,
    IsNull,
    Not,
    Or,
    Span,
    StartsWith,
    Token,
    VectorsExists,
)
from common.filter.lexer import KEYWORDS, is_word

NO_SPAN = Span(0, 0)
_OPS = ("=", "!=", ">", ">=", "<", "<=")
_NEGATED_SUFFIX: dict[type, str] = {Exists: "NOT EXISTS", IsNull: "IS NOT NULL", IsEmpty: "IS NOT EMPTY"}

texts = st.text(max_size=12)
"""Any text: quoting and escaping make every string writable."""
names = st.one_of(st.from_regex(r"[a-z_][a-z0-9_.\-]{0,8}", fullmatch=True), texts)


def without_spans(node: Any) -> Any:
    """The tree with every span replaced by ``NO_SPAN``: what a render/parse round trip preserves."""
    if isinstance(node, Span):
        return NO_SPAN
    if isinstance(node, tuple):
        return tuple(without_spans(item) for item in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {field.name: without_spans(getattr(node, field.name)) for field in dataclasses.fields(node)}
        return dataclasses.replace(node, **changes)
    return node


def filter_trees(
    fields: st.SearchStrategy[str] = names,
    values: st.SearchStrategy[str] = texts,
    *,
    geo: bool = True,
    vectors: bool = True,
    max_leaves: int = 12,
) -> st.SearchStrategy[Filter]:
    """Trees the parser can produce: no ``Not(Not(...))``, And/Or with at least two children."""
    tokens = fields.map(lambda text: Token(text, NO_SPAN))
    operands = values.map(lambda text: Token(text, NO_SPAN))
    leaves: list[st.SearchStrategy[Filter]] = [
        st.builds(Compare, tokens, st.sampled_from(_OPS), operands),
        st.builds(Between, tokens, operands, operands),
        st.builds(In, tokens, st.lists(operands, max_size=4).map(tuple)),
        st.builds(Exists, tokens),
        st.builds(IsNull, tokens),
        st.builds(IsEmpty, tokens),
        st.builds(Contains, tokens, operands, st.just(NO_SPAN)),
        st.builds(StartsWith, tokens, operands),
    ]
    if geo:
        leaves.append(_geo_nodes())
    if vectors:
        leaves.append(_vector_nodes())
    base = st.one_of(leaves)

    def extend(children: st.SearchStrategy[Filter]) -> st.SearchStrategy[Filter]:
        groups = st.lists(children, min_size=2, max_size=3).map(tuple)
        return st.one_of(
            children.filter(lambda node: not isinstance(node, Not)).map(Not),
            groups.map(And),
            groups.map(Or),
        )

    return st.recursive(base, extend, max_leaves=max_leaves)


def _geo_nodes() -> st.SearchStrategy[Filter]:
    lats = st.floats(-90, 90)
    lngs = st.floats(-180, 180)
    points = st.tuples(lats, lngs)
    radius = st.builds(
        GeoRadius,
        lats,
        lngs,
        st.floats(allow_nan=False, allow_infinity=False),
        st.none() | st.integers(3, 1000),
        st.just(NO_SPAN),
    )
    boxes = st.tuples(points, points).map(
        lambda pair: GeoBoundingBox(
            (max(pair[0][0], pair[1][0]), pair[0][1]), (min(pair[0][0], pair[1][0]), pair[1][1]), NO_SPAN
        )
    )
    polygons = st.lists(points, min_size=3, max_size=5).map(lambda pts: GeoPolygon(tuple(pts), NO_SPAN))
    return st.one_of(radius, boxes, polygons)


def _vector_nodes() -> st.SearchStrategy[Filter]:
    embedder = st.from_regex(r"[A-Za-z0-9_\-]{1,6}", fullmatch=True)
    suffix = st.sampled_from(["", ".userProvided", ".documentTemplate", ".regenerate"]) | embedder.map(
        lambda name: f".fragments.{name}"
    )
    paths = st.just("") | st.builds(lambda name, rest: f".{name}{rest}", embedder, suffix)
    return paths.map(lambda path: VectorsExists(path, NO_SPAN))


def render(node: Filter) -> str:
    """The filter string of ``node``: values quoted when they could not be written bare."""
    if isinstance(node, Not):
        child = node.child
        if isinstance(child, (Exists, IsNull, IsEmpty)):
            return f"{_token(child.field)} {_NEGATED_SUFFIX[type(child)]}"
        if isinstance(child, In):
            return f"{_token(child.field)} NOT IN [{', '.join(_token(value) for value in child.values)}]"
        if isinstance(child, (Contains, StartsWith)):
            keyword = "CONTAINS" if isinstance(child, Contains) else "STARTS WITH"
            return f"{_token(child.field)} NOT {keyword} {_token(child.value)}"
        if isinstance(child, VectorsExists):
            return f"_vectors{child.path} NOT EXISTS"
        return f"NOT {_grouped(child)}"
    if isinstance(node, (And, Or)):
        joiner = " AND " if isinstance(node, And) else " OR "
        return joiner.join(_operand(child, node) for child in node.children)
    return _condition(node)


def _operand(child: Filter, parent: And | Or) -> str:
    """Parentheses where precedence or flattening would change the tree (AND binds tighter than OR)."""
    if isinstance(child, And) and isinstance(parent, Or):
        return render(child)
    return _grouped(child)


def _grouped(node: Filter) -> str:
    return f"({render(node)})" if isinstance(node, (And, Or)) else render(node)


def _condition(node: Filter) -> str:
    if isinstance(node, Compare):
        return f"{_token(node.field)} {node.op} {_token(node.value)}"
    if isinstance(node, Between):
        return f"{_token(node.field)} {_token(node.low)} TO {_token(node.high)}"
    if isinstance(node, In):
        return f"{_token(node.field)} IN [{', '.join(_token(value) for value in node.values)}]"
    if isinstance(node, Exists):
        return f"{_token(node.field)} EXISTS"
    if isinstance(node, IsNull):
        return f"{_token(node.field)} IS NULL"
    if isinstance(node, IsEmpty):
        return f"{_token(node.field)} IS EMPTY"
    if isinstance(node, Contains):
        return f"{_token(node.field)} CONTAINS {_token(node.value)}"
    if isinstance(node, StartsWith):
        return f"{_token(node.field)} STARTS WITH {_token(node.value)}"
    if isinstance(node, VectorsExists):
        return f"_vectors{node.path} EXISTS"
    if isinstance(node, GeoRadius):
        extra = "" if node.resolution is None else f", {node.resolution}"
        return f"_geoRadius({node.lat!r}, {node.lng!r}, {node.meters!r}{extra})"
    if isinstance(node, GeoBoundingBox):
        (top, right), (bottom, left) = node.top_right, node.bottom_left
        return f"_geoBoundingBox([{top!r}, {right!r}], [{bottom!r}, {left!r}])"
    if isinstance(node, GeoPolygon):
        return f"_geoPolygon({', '.join(f'[{lat!r}, {lng!r}]' for lat, lng in node.points)})"
    raise TypeError(f"not a filter node: {node!r}")


def _token(token: Token) -> str:
    text = token.text
    if is_word(text) and text not in KEYWORDS and not text.startswith(("_geo", "_vectors")):
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
