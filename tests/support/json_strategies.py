"""Hypothesis strategies for JSON values as orjson reads and writes them (integers within 64 bits)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def json_values(max_text: int, max_items: int, max_leaves: int) -> st.SearchStrategy[Any]:
    """Nested JSON values: scalars, then lists and objects of at most ``max_items`` entries."""
    return st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(2**63), 2**64 - 1)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=max_text),
        lambda children: (
            st.lists(children, max_size=max_items)
            | st.dictionaries(st.text(max_size=max_items), children, max_size=max_items)
        ),
        max_leaves=max_leaves,
    )
