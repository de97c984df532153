"""Filter parser properties: rendered trees parse back; any input parses or fails with a FilterError."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from common.filter.ast import Filter
from common.filter.errors import FilterError
from common.filter.parse import parse_filter
from tests.support.filter_strategies import filter_trees, render, without_spans

FILTER_TEXT = st.text(alphabet=st.sampled_from(list("ab =!<>()[],'\"\\_NOTANDRIEXSC01.-\t\né🐻")))
"""Texts made of the grammar's characters, so that fuzzing reaches deep into it."""
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(filter_trees())
def test_rendered_trees_parse_back(tree: Filter) -> None:
    assert without_spans(parse_filter(render(tree))) == tree


def _parses_or_refuses(value: object) -> None:
    with contextlib.suppress(FilterError):
        parse_filter(value)


@settings(max_examples=400, deadline=None)
@given(st.text() | FILTER_TEXT)
def test_any_text_parses_or_is_refused(text: str) -> None:
    _parses_or_refuses(text)


@settings(max_examples=200, deadline=None)
@given(JSON | st.lists(st.lists(FILTER_TEXT, max_size=3) | FILTER_TEXT, max_size=3))
def test_any_json_parses_or_is_refused(value: object) -> None:
    _parses_or_refuses(value)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 400), st.sampled_from(["(", "NOT ", "( NOT ", "a = 1 AND (", "[", "'"]))
def test_deep_nesting_is_refused_not_crashing(depth: int, opening: str) -> None:
    _parses_or_refuses(opening * depth + "x = 1" + ")" * depth)


def test_long_inputs() -> None:
    conditions = " AND ".join(f"field{i} = 'value {i}'" for i in range(2000))
    tree = parse_filter(conditions)
    assert tree is not None
    _parses_or_refuses("x IN [" + ", ".join(map(str, range(10000))) + "]")
    _parses_or_refuses("(" * 10000)
    _parses_or_refuses("NOT " * 10000)
