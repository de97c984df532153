"""The differential bench's verdicts (``bench/differential.py``): ``extended`` never hides a
reordering or a missing hit of the reference's page."""

from __future__ import annotations

import pytest

from bench.differential import _leaf, _reported, _verdict


@pytest.mark.parametrize(
    ("sift", "reference", "total", "verdict"),
    [
        ([1, 2, 3], [1, 2, 3], 3, "identical"),
        ([1, 2, 3, 4], [1, 2, 3], 3, "extended"),
        ([4], [], 0, "extended"),
        ([1, 2, 3, 4], [1, 2, 3], 40, "differ"),  # the reference's page is not its whole result
        ([2, 1, 3, 4], [1, 2, 3], 3, "differ"),  # reordered, then more
        ([1, 3, 4], [1, 2, 3], 3, "differ"),  # a reference hit missing
        ([1, 4, 2, 3], [1, 2, 3], 3, "differ"),  # an extra hit inside the reference's page
        ([2, 1, 3], [1, 2, 3], 3, "other order"),
    ],
)
def test_verdicts(sift: list[int], reference: list[int], total: int, verdict: str) -> None:
    assert _verdict(sift, reference, total) == verdict


def test_leaves_follow_array_indices() -> None:
    document = {"title": "Up", "cast": [{"name": "Ed"}, {"name": "Jo"}], "tags": [["a", "b"], ["c"]]}
    assert _leaf(document, "title", []) == "Up"
    assert _leaf(document, "cast.name", [1]) == "Jo"
    assert _leaf(document, "tags", [0, 1]) == "b"


def test_cases_file_holds_other_pages_and_other_facet_counts() -> None:
    assert not _reported({"verdict": "identical"})
    assert not _reported({"verdict": "identical", "facets_equal": True})
    # Facet counts cover every match (stemmed ones too), past the page: an identical page can hide them.
    assert _reported({"verdict": "identical", "facets_equal": False})
    assert _reported({"verdict": "extended"})
