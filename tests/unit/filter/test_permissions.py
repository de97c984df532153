"""Filterable rules and their features (search.md §4.3, §4.4, §6.3): the reference's errors and positions."""

from __future__ import annotations

from typing import Any

import pytest

from common.errors import ApiError
from common.filter.errors import FilterError
from common.filter.parse import parse_filter
from common.filter.permissions import Features, check_experimental, check_filter, matching_rule

EQUALITY_ONLY = {"attributePatterns": ["doggos.*"], "features": {"facetSearch": False, "filter": {}}}
COMPARISON_ONLY = {
    "attributePatterns": ["price"],
    "features": {"filter": {"equality": False, "comparison": True}},
}
EQ_OPS = "OR, AND, NOT, =, !=, IN, IS EMPTY, IS NULL, EXISTS"
CMP_OPS = "OR, AND, NOT, <, >, <=, >=, TO, IS EMPTY, IS NULL, EXISTS"
NONE_CONFIGURED = "This index does not have configured filterable attributes."
NOTHING = {"attributePatterns": ["secret*"], "features": {"facetSearch": True, "filter": {"equality": False}}}


def refusal(text: str, rules: list[Any], **kwargs: Any) -> str:
    tree = parse_filter(text)
    assert tree is not None
    with pytest.raises(FilterError) as caught:
        check_filter(tree, rules, "movies", **kwargs)
    return caught.value.message


def allowed(text: str, rules: list[Any]) -> None:
    tree = parse_filter(text)
    assert tree is not None
    check_filter(tree, rules, "movies")


def test_first_matching_rule_wins() -> None:
    rules: list[Any] = ["genre", EQUALITY_ONLY, {"attributePatterns": ["*"]}, COMPARISON_ONLY]
    assert matching_rule(rules, "genre") == (0, Features(True, True, True))
    assert matching_rule(rules, "genre.name") == (0, Features(True, True, True))
    assert matching_rule(rules, "doggos.age") == (1, Features(False, True, False))
    assert matching_rule(rules, "price") == (2, Features(False, True, False))
    assert matching_rule(["genre"], "genres") is None
    assert matching_rule([{"attributePatterns": ["*_id", "*mid*", "a.b"]}], "user_id") is not None
    assert matching_rule([{"attributePatterns": ["*mid*"]}], "amidst") is not None
    assert matching_rule([{"attributePatterns": ["a.b"]}], "a") is None


def test_every_field_must_be_filterable() -> None:
    assert refusal('"many" = "Glass"', ["title"]) == (
        "Index `movies`: Attribute `many` is not filterable. Available filterable attribute patterns are:"
        ' `title`.\n2:6 "many" = "Glass"'
    )
    assert refusal("title = a OR NOT many EXISTS", [NOTHING]) == (
        "Index `movies`: Attribute `title` is not filterable. This index does not have configured filterable"
        " attributes.\n1:6 title = a OR NOT many EXISTS"
    )
    assert refusal("secret_x = 1", [NOTHING, "b", EQUALITY_ONLY, "b"]) == (
        "Index `movies`: Attribute `secret_x` is not filterable. Available filterable attribute patterns are:"
        " `b`, `doggos.*`.\n1:9 secret_x = 1"
    )


def test_the_field_check_comes_before_operator_checks() -> None:
    message = refusal("price = 3 AND other > 1", [COMPARISON_ONLY])
    assert message.startswith("Index `movies`: Attribute `other` is not filterable.")


@pytest.mark.parametrize(
    ("text", "rules", "op", "needs", "allowed_ops"),
    [
        ("doggos.age > 2", [EQUALITY_ONLY], ">", "comparison", EQ_OPS),
        ("doggos.age 1 TO 2", [EQUALITY_ONLY], "TO", "comparison", EQ_OPS),
        ("x = 1 OR price != 2", ["x", COMPARISON_ONLY], "!=", "equality", CMP_OPS),
        ("price IN [1]", [COMPARISON_ONLY], "=", "equality", CMP_OPS),
    ],
)
def test_operators_need_their_feature(
    text: str, rules: list[Any], op: str, needs: str, allowed_ops: str
) -> None:
    field = "doggos.age" if "doggos" in text else "price"
    index = rules.index(EQUALITY_ONLY if "doggos" in text else COMPARISON_ONLY)
    assert refusal(text, rules) == (
        f"Index `movies`: Filter operator `{op}` is not allowed for the attribute `{field}`.\n"
        f"  - Note: allowed operators: {allowed_ops}.\n"
        f"  - Note: field `{field}` matched rule #{index} in `filterableAttributes`\n"
        f"  - Hint: enable {needs} in rule #{index} by modifying the features.filter object\n"
        f"  - Hint: prepend another rule matching `{field}` with appropriate filter features before"
        f" rule #{index}"
    )


def test_operators_allowed_by_either_feature() -> None:
    texts = ("price EXISTS", "price IS NULL", "NOT price IS EMPTY", "price CONTAINS 1", "price STARTS WITH 1")
    for text in (*texts, "price IN []", "price >= 3"):
        allowed(text, [COMPARISON_ONLY])
    allowed("doggos.age = 1 AND doggos.name IN [a] AND doggos.x != 2", [EQUALITY_ONLY])


def test_operators_on_unknown_fields_are_not_checked() -> None:
    tree = parse_filter("doggos.age > 2")
    assert tree is not None
    check_filter(tree, [EQUALITY_ONLY], "movies", field_exists=lambda field: False)


@pytest.mark.parametrize(
    ("text", "rules", "attribute", "columns", "available"),
    [
        ("_geoRadius(1, 2, 3)", [], "_geo/_geojson", "12:13", NONE_CONFIGURED),
        ("_geoBoundingBox([1, 2], [0, 3])", ["x"], "_geo/_geojson", "18:19", "Available [...] `x`."),
        ("_geoPolygon([1, 2], [3, 4], [5, 6])", ["_geo"], "_geojson", "14:15", "Available [...] `_geo`."),
    ],
)
def test_geo_filters_need_geo_rules(
    text: str, rules: list[Any], attribute: str, columns: str, available: str
) -> None:
    available = available.replace("[...]", "filterable attribute patterns are:")
    assert refusal(text, rules) == (
        f"Index `movies`: Attribute `{attribute}` is not filterable. {available}\n{columns} {text}"
    )


def test_geo_filters_with_geo_rules() -> None:
    allowed("_geoRadius(1, 2, 3) OR _geoBoundingBox([1, 2], [0, 3])", ["_geo"])
    allowed("_geoRadius(1, 2, 3) AND _geoPolygon([1, 2], [3, 4], [5, 6])", ["_geojson"])


def test_contains_and_vector_filters_need_their_experimental_features() -> None:
    tree = parse_filter(["a = 1", "NOT title CONTAINS x"])
    assert tree is not None
    with pytest.raises(ApiError) as caught:
        check_experimental(tree, contains_filter=False, multimodal=True)
    assert caught.value.code == "feature_not_enabled"
    assert caught.value.message == (
        "Using `CONTAINS` in a filter requires enabling the `contains filter` experimental feature."
        " See https://github.com/orgs/meilisearch/discussions/763\n11:19 NOT title CONTAINS x"
    )
    check_experimental(tree, contains_filter=True, multimodal=False)
    starts = parse_filter("title STARTS WITH x")
    assert starts is not None
    check_experimental(starts, contains_filter=False, multimodal=False)
    vectors = parse_filter("_vectors.default EXISTS")
    assert vectors is not None
    with pytest.raises(ApiError) as caught:
        check_experimental(vectors, contains_filter=True, multimodal=False)
    assert caught.value.message.endswith("\n1:9 _vectors.default EXISTS")
