"""Geo filter functions (search.md §4.4) and ``_vectors`` filters: trees, messages and positions."""

from __future__ import annotations

import pytest

from common.filter.ast import GeoBoundingBox, GeoPolygon, GeoRadius, Not, Span, VectorsExists
from common.filter.errors import FilterError
from common.filter.parse import parse_filter

RADIUS_FORM = (
    "The `_geoRadius` filter must be in the form:"
    " `_geoRadius(latitude, longitude, radius, optionalResolution)`."
)
BOX_FORM = (
    "The `_geoBoundingBox` filter expects two pairs of arguments: `_geoBoundingBox([latitude, longitude],"
    " [latitude, longitude])`."
)
POLYGON_FORM = (
    "The `_geoPolygon` filter doesn't match the expected format: `_geoPolygon([latitude, longitude],"
    " [latitude, longitude])`."
)
SUFFIXES = "`fragments`, `userProvided`, `documentTemplate`, `regenerate`"


def error(text: str) -> str:
    with pytest.raises(FilterError) as caught:
        parse_filter(text)
    return caught.value.message


def test_geo_trees() -> None:
    assert parse_filter("_geoRadius(12,13.5, 1e3)") == GeoRadius(12.0, 13.5, 1000.0, None, Span(12, 14))
    assert parse_filter(" NOT _geoRadius( -1 , +2.,.5, 3.9)") == Not(
        GeoRadius(-1.0, 2.0, 0.5, 3, Span(18, 20))
    )
    assert parse_filter("_geoBoundingBox([45, -170], [-45, 170])") == GeoBoundingBox(
        (45.0, -170.0), (-45.0, 170.0), Span(18, 20)
    )
    assert parse_filter("_geoPolygon([1, 2], [3, 4], [5, 6],)") == GeoPolygon(
        ((1.0, 2.0), (3.0, 4.0), (5.0, 6.0)), Span(14, 15)
    )


@pytest.mark.parametrize(
    ("text", "sentence", "columns"),
    [
        ("_geoRadius", RADIUS_FORM, "1:11"),
        ("_geoRadius = 12", RADIUS_FORM, "1:16"),
        ("_geoRadius (1, 2, 3)", RADIUS_FORM, "1:21"),
        ("_geoRadius(1, 2, x)", RADIUS_FORM, "1:20"),
        ("_geoRadius(1, 2)", "Was expecting 3 or 4 arguments for `_geoRadius`, but instead found 2.", "1:17"),
        (
            "_geoRadius(1,2,3,4,5)",
            "Was expecting 3 or 4 arguments for `_geoRadius`, but instead found 5.",
            "1:22",
        ),
        (
            "_geoRadius(1, 2, 3, 1001)",
            "Invalid resolution `1001`. Resolution must be between 3 and 1000.",
            "21:25",
        ),
        (
            "_geoRadius(1, 2, 3, -5)",
            "Invalid resolution `0`. Resolution must be between 3 and 1000.",
            "21:23",
        ),
        (
            "_geoRadius(-100, 150, 10)",
            "Bad latitude `-100`. Latitude must be contained between -90 and 90 degrees.",
            "12:16",
        ),
        (
            "_geoRadius(-90.0000001, 150, 10)",
            "Bad latitude `-90.0000001`. Latitude must be contained between -90 and 90 degrees.",
            "12:23",
        ),
        (
            "_geoRadius(0, 540.5, 10)",
            "Bad longitude `540.5`. Longitude must be contained between -180 and 180 degrees. Hint: "
            "try using `-179.5` instead.",
            "15:20",
        ),
        ("_geoRadius(1e400, 0, 1)", "Non finite floats are not supported", "12:17"),
        ("_geoRadius(1, 2, 1e999)", "Non finite floats are not supported", "18:23"),
        ("_geoBoundingBox", BOX_FORM, "1:16"),
        ("_geoBoundingBox(1.0, 1.0)", BOX_FORM, "1:26"),
        ("_geoBoundingBox([1, 2])", BOX_FORM, "1:24"),
        ("_geoBoundingBox([1, 2], [3, 4], [5, 6])", BOX_FORM, "1:40"),
        ("_geoBoundingBox([1, 2], [3])", "Was expecting 2 coordinates but instead found 1.", "1:29"),
        (
            "_geoBoundingBox([1, 2], [3, 4])",
            "The top latitude `1` is below the bottom latitude `3`.",
            "29:30",
        ),
        (
            "_geoBoundingBox([1, 181], [0, 4])",
            "Bad longitude `181`. Longitude must be contained between -180 and 180 degrees. Hint: try "
            "using `-179` instead.",
            "21:24",
        ),
        ("_geoPolygon", POLYGON_FORM, "1:12"),
        ("_geoPolygon([1, 2], [3, 4] [5, 6])", POLYGON_FORM, "1:35"),
        (
            "_geoPolygon([1, 2], [3, 4])",
            "The `_geoPolygon` filter expects at least 3 points but only 2 were specified",
            "1:28",
        ),
        (
            "_geoPolygon([1, 2], [3, 4], [5, 6, 7])",
            "Was expecting 2 coordinates but instead found 3.",
            "1:39",
        ),
        (
            "_geoPolygon([1, 2], [3, 4], [95, 6])",
            "Bad latitude `95`. Latitude must be contained between -90 and 90 degrees.",
            "30:32",
        ),
    ],
)
def test_geo_errors(text: str, sentence: str, columns: str) -> None:
    assert error(text) == f"{sentence}\n{columns} {text}"


def test_vector_filters() -> None:
    assert parse_filter("_vectors EXISTS") == VectorsExists("", Span(1, 9))
    assert parse_filter("_vectors.rest  NOT  EXISTS") == Not(VectorsExists(".rest", Span(1, 9)))
    quoted = parse_filter("_vectors.'my emb'.userProvided EXISTS")
    assert quoted == VectorsExists(".my emb.userProvided", Span(1, 9))
    fragment = parse_filter("_vectors.e.fragments.basic EXISTS")
    assert fragment == VectorsExists(".e.fragments.basic", Span(1, 9))
    assert parse_filter("_vectorsX EXISTS") is not None  # an ordinary field


@pytest.mark.parametrize(
    ("text", "sentence", "columns"),
    [
        (
            "_vectors = 1",
            "Was expecting an operation like `EXISTS` or `NOT EXISTS` after the vector filter.",
            "10:13",
        ),
        ("_vectors.rest=1", "The vector filter has leftover tokens.", "14:16"),
        ("_vectors. EXISTS", "Was expecting embedder name but found nothing.", "10:11"),
        ("_vectors.(x) EXISTS", "The vector filter's embedder name is invalid.", "10:20"),
        ("_vectors.'x EXISTS", "The quotes in one of the values are inconsistent.", "10:19"),
        (
            "_vectors.e. EXISTS",
            "Was expecting one of `.fragments`, `.userProvided`, `.documentTemplate`, `.regenerate` or "
            "nothing, but instead found a point without a valid value.",
            "12:19",
        ),
        ("_vectors.e.'regenerate' EXISTS", "Was expecting this part to be unquoted.", "12:24"),
        (
            "_vectors.e.usrProvided EXISTS",
            f"Was expecting one of {SUFFIXES} or nothing, but instead found `usrProvided`. Did you mean "
            "`userProvided`?",
            "12:23",
        ),
        (
            "_vectors.e.other EXISTS",
            f"Was expecting one of {SUFFIXES} or nothing, but instead found `other`.",
            "12:17",
        ),
        (
            "_vectors.e.regenerate.userProvided EXISTS",
            "Vector filter can only accept one of `fragments`, `userProvided`, `documentTemplate` or "
            "`regenerate`, but found both `regenerate` and `userProvided`.",
            "23:35",
        ),
        ("_vectors.e.fragments EXISTS", "The vector filter is missing a fragment name.", "21:28"),
        ("_vectors.e.fragments.( EXISTS", "The vector filter's fragment name is invalid.", "22:30"),
    ],
)
def test_vector_filter_errors(text: str, sentence: str, columns: str) -> None:
    assert error(text) == f"{sentence}\n{columns} {text}"
