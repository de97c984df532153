"""Sort expressions (search.md §5, §1.9): criteria and every message."""

from __future__ import annotations

import pytest

from common.sort import FieldSort, GeoSort, SortError, check_sort, parse_sort

RESERVED = "is a reserved keyword and thus can't be used as a sort expression."
USE_GEO_POINT = " Use the _geoPoint(latitude, longitude) built-in rule to sort on _geo field coordinates."


def refusal(entry: str) -> str:
    with pytest.raises(SortError) as caught:
        parse_sort([entry])
    return caught.value.message


@pytest.mark.parametrize(
    ("entry", "criterion"),
    [
        ("truc:asc", FieldSort("truc", True)),
        ("a-b:desc", FieldSort("a-b", False)),
        ("a:b:desc", FieldSort("a:b", False)),
        ("42:asc", FieldSort("42", True)),
        ("truc(12, 13):desc", FieldSort("truc(12, 13)", False)),
        ("_geoPoint(1,2:asc", FieldSort("_geoPoint(1,2", True)),
        ("_geoPoint(42, 59):asc", GeoSort((42.0, 59.0), True)),
        ("_geoPoint(42.459, 59):desc", GeoSort((42.459, 59.0), False)),
        ("_geoPoint(90.000000000, 180):desc", GeoSort((90.0, 180.0), False)),
        ("_geoPoint(-90, -180.0000000000):asc", GeoSort((-90.0, -180.0), True)),
        ("_geoPoint(42., 59.):desc", GeoSort((42.0, 59.0), False)),
        ("_geoPoint( 1e1 ,+2 ):asc", GeoSort((10.0, 2.0), True)),
    ],
)
def test_criteria(entry: str, criterion: FieldSort | GeoSort) -> None:
    assert parse_sort([entry]) == [criterion]


@pytest.mark.parametrize("entry", ["title", "truc:machin", "truc:asc:deesc", "42desc", "", "_geoPoint(1, 2)"])
def test_entries_must_end_with_an_order(entry: str) -> None:
    assert refusal(entry) == (
        "Invalid syntax for the sort parameter: expected expression ending by `:asc` or `:desc`, found"
        f" `{entry}`."
    )


@pytest.mark.parametrize(
    ("entry", "member"),
    [
        ("_geoPoint:asc", "_geoPoint"),
        ("_geoPoint(42,12 , 59,598):desc", "_geoPoint(42,12 , 59,598)"),
        ("_geoPoint(35, 85, 75):asc", "_geoPoint(35, 85, 75)"),
        ("_geoPoint(18):asc", "_geoPoint(18)"),
        ("_geoPoint(1_0, 2):asc", "_geoPoint(1_0, 2)"),
    ],
)
def test_malformed_geo_points(entry: str, member: str) -> None:
    assert refusal(entry) == (
        "Invalid syntax for the geo parameter: expected expression formated like `_geoPoint(latitude,"
        f" longitude)` and ending by `:asc` or `:desc`, found `{member}`."
    )


def test_geo_point_coordinates() -> None:
    assert refusal("_geoPoint(200, 200):asc") == (
        "Bad latitude `200`. Latitude must be contained between -90 and 90 degrees."
    )
    assert refusal("_geoPoint(0, -180.000001):desc") == (
        "Bad longitude `-180.000001`. Longitude must be contained between -180 and 180 degrees. Hint: try"
        " using `179.999999` instead."
    )
    assert refusal("_geoPoint(nan, 0):asc").startswith("Bad latitude `NaN`.")
    assert refusal("_geoPoint(0, inf):asc") == (
        "Bad longitude `inf`. Longitude must be contained between -180 and 180 degrees. Hint: try using `NaN`"
        " instead."
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("_geo:asc", f"`_geo` {RESERVED}{USE_GEO_POINT}"),
        ("_geoDistance:desc", f"`_geoDistance` {RESERVED}"),
        ("_geojson:asc", f"`_geojson` {RESERVED}"),
        ("_geoPolygon:asc", f"`_geoPolygon` {RESERVED}"),
        ("_geoRadius:asc", f"`_geoRadius` {RESERVED}{USE_GEO_POINT}"),
        ("_geoRadius(1, 2, 3):asc", f"`_geoRadius` {RESERVED}{USE_GEO_POINT}"),
        ("_geoBoundingBox([1, 2]):asc", f"`_geoBoundingBox` {RESERVED}{USE_GEO_POINT}"),
    ],
)
def test_reserved_names(entry: str, message: str) -> None:
    assert refusal(entry) == message


def check(entries: list[str], **settings: object) -> str | None:
    options: dict[str, object] = {
        "ranking_rules": ["words", "sort"], "sortable": ["id"], "displayed": ["*"], "index_uid": "movies"
    }
    options.update(settings)
    try:
        check_sort(parse_sort(entries), **options)  # type: ignore[arg-type]
    except SortError as error:
        return error.message
    return None


def test_sortable_attributes() -> None:
    assert check(["id:asc", "id.nested:desc"]) is None
    assert check([], ranking_rules=[]) is None
    assert check(["title:asc"]) == (
        "Index `movies`: Attribute `title` is not sortable. Available sortable attributes are: `id`."
    )
    assert check(["_geoPoint(1, 2):asc"], sortable=["b", "a", "_geo.lat"], displayed=["a", "_geo.lat"]) == (
        "Index `movies`: Attribute `_geo` is not sortable. Available sortable attributes are:"
        " `_geo.lat, a, <..hidden-attributes>`."
    )
    assert check(["title:asc"], sortable=[]) == (
        "Index `movies`: Attribute `title` is not sortable. This index does not have configured sortable"
        " attributes."
    )
    assert check(["title:asc"], ranking_rules=["words"]) == (
        "Index `movies`: You must specify where `sort` is listed in the rankingRules setting to use the sort"
        " parameter at search time."
    )
