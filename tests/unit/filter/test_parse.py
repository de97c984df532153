"""The filter grammar (search.md §4.1, §4.2, §4.5): trees, spans and every parse error, position included."""

from __future__ import annotations

import pytest

from common.filter.ast import (
    And,
    Between,
    Compare,
    Contains,
    Exists,
    Filter,
    Foreign,
    In,
    IsEmpty,
    IsNull,
    Not,
    Or,
    Span,
    StartsWith,
    Token,
)
from common.filter.errors import FilterError
from common.filter.parse import parse_filter
from tests.support.filter_strategies import without_spans

OPERATIONS = (
    "Was expecting an operation `=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`,"
    " `NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`,"
    " `STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon`"
)
RESERVED_GEO = (
    "is a reserved keyword and thus can't be used as a filter expression. Use the `_geoRadius(latitude,"
    " longitude, distance)` or `_geoBoundingBox([latitude, longitude], [latitude, longitude])` built-in rules"
    " to filter on `_geo` coordinates."
)


def t(text: str) -> Token:
    """A token whose span is ignored by ``parsed``."""
    return Token(text, Span(0, 0))


def parsed(value: object) -> Filter | None:
    tree = parse_filter(value)
    return None if tree is None else without_spans(tree)


def error(value: object) -> str:
    with pytest.raises(FilterError) as caught:
        parse_filter(value)
    return caught.value.message


def eq(field: str, value: str, op: str = "=") -> Compare:
    return Compare(t(field), op, t(value))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("channel = Ponce", eq("channel", "Ponce")),
        ("subscribers = 12", eq("subscribers", "12")),
        ("channel = 'Mister Mv'", eq("channel", "Mister Mv")),
        ('channel = "Mister Mv"', eq("channel", "Mister Mv")),
        ("'dog race' = Borzoi", eq("dog race", "Borzoi")),
        ("\"dog race\" = 'Bernese Mountain'", eq("dog race", "Bernese Mountain")),
        ("a=1", eq("a", "1")),
        ("release_date > 2004-01-01", eq("release_date", "2004-01-01", ">")),
        ("rating.users >= 4.5", eq("rating.users", "4.5", ">=")),
        ("x != y", eq("x", "y", "!=")),
        ("x < 1", eq("x", "1", "<")),
        ("x <= 1", eq("x", "1", "<=")),
        ("x = ''", eq("x", "")),
        ("année = été", eq("année", "été")),
        ("subscribers 100 TO 1000", Between(t("subscribers"), t("100"), t("1000"))),
        ("NOT subscribers 100 TO 1000", Not(Between(t("subscribers"), t("100"), t("1000")))),
        ("colour IN[]", In(t("colour"), ())),
        ("colour IN[green,]", In(t("colour"), (t("green"),))),
        (" colour IN [  green , blue , ]", In(t("colour"), (t("green"), t("blue")))),
        ("colour NOT IN[green,blue]", Not(In(t("colour"), (t("green"), t("blue"))))),
        (" colour NOT  IN [green, blue] ", Not(In(t("colour"), (t("green"), t("blue"))))),
        ("x IS NULL", IsNull(t("x"))),
        ("x  IS   NOT   NULL", Not(IsNull(t("x")))),
        ("NOT x IS NOT NULL", IsNull(t("x"))),
        ("x IS EMPTY", IsEmpty(t("x"))),
        ("x IS\tNOT\nEMPTY", Not(IsEmpty(t("x")))),
        ("x EXISTS", Exists(t("x"))),
        ("x NOT   EXISTS", Not(Exists(t("x")))),
        ("NOT x NOT EXISTS", Exists(t("x"))),
        ("x CONTAINS 'hello'", Contains(t("x"), t("hello"), Span(0, 0))),
        ("x NOT CONTAINS hello", Not(Contains(t("x"), t("hello"), Span(0, 0)))),
        ("x STARTS WITH 'hel'", StartsWith(t("x"), t("hel"))),
        ("x NOT   STARTS WITH hel", Not(StartsWith(t("x"), t("hel")))),
        ("NOT NOT NOT NOT x = 5", eq("x", "5")),
        ("NOT NOT (NOT NOT x = 5)", eq("x", "5")),
        ("NOT (a = 1)", Not(eq("a", "1"))),
        ('NOT "OR" EXISTS AND "EXISTS" NOT EXISTS', And((Not(Exists(t("OR"))), Not(Exists(t("EXISTS")))))),
        ("a = 1 OR b = 2 AND c = 3", Or((eq("a", "1"), And((eq("b", "2"), eq("c", "3")))))),
        ("a = 1 AND b = 2 AND c = 3", And((eq("a", "1"), eq("b", "2"), eq("c", "3")))),
        ("a = 1 AND (b = 2 AND c = 3)", And((eq("a", "1"), And((eq("b", "2"), eq("c", "3")))))),
        ("(a = 1 OR b = 2) AND c = 3", And((Or((eq("a", "1"), eq("b", "2"))), eq("c", "3")))),
        (" (colour = green OR colour = red) ", Or((eq("colour", "green"), eq("colour", "red")))),
        ("x CONTAINSfoo", Contains(t("x"), t("foo"), Span(0, 0))),
    ],
)
def test_grammar(text: str, tree: Filter) -> None:
    assert parsed(text) == tree


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (r"title = 'foo\\'", "foo\\"),
        (r"title = 'foo\\\\'", "foo\\\\"),
        (r"""title = 'foo\x20\n\t\"\'"'""", "foo \n\t\"'\""),
        (r"x = 'O\'Reilly'", "O'Reilly"),
        (r'x = "say \"hi\""', 'say "hi"'),
        (r"x = 'caf\u00e9 \u{1F600}'", "café \U0001f600"),
        (r"x = '\101\7\0'", "A\x07\x00"),
        (r"x = '\b\f\v\/'", "\b\f\v/"),
        (r"x = '\u{41'", "A"),
    ],
)
def test_quoted_values_are_unescaped(text: str, value: str) -> None:
    tree = parse_filter(text)
    assert isinstance(tree, Compare)
    assert tree.value.text == value


def test_spans_are_the_contract_columns_of_the_unquoted_text() -> None:
    tree = parse_filter("\"many\" = 'Glass' AND année > 2")
    assert isinstance(tree, And)
    first, second = tree.children
    assert isinstance(first, Compare) and isinstance(second, Compare)
    assert (first.field.span, first.value.span) == (Span(2, 6), Span(11, 16))
    assert second.field.span == Span(22, 27)
    assert first.field.span.source == "\"many\" = 'Glass' AND année > 2"
    contains = parse_filter("x NOT CONTAINS y")
    assert isinstance(contains, Not) and isinstance(contains.child, Contains)
    assert contains.child.keyword == Span(7, 15)


def test_columns_restart_on_each_line() -> None:
    assert error("a = 1\nAND b c") == f"{OPERATIONS} at `b c`.\n5:8 a = 1\nAND b c"


@pytest.mark.parametrize("blank", [None, "", "   ", "\t\n", [], ["", "  "], [[], [""]]])
def test_blank_filters_filter_nothing(blank: object) -> None:
    assert parse_filter(blank) is None


def test_array_form_ands_outer_and_ors_inner_elements() -> None:
    tree = parsed([["genres = comedy", "genres = horror"], "NOT director = 'Jordan Peele'", ["", "a = 1"]])
    assert tree == And(
        (
            Or((eq("genres", "comedy"), eq("genres", "horror"))),
            Not(eq("director", "Jordan Peele")),
            eq("a", "1"),
        )
    )
    assert parsed(["a = 1"]) == eq("a", "1")
    assert parsed([["a = 1 OR b = 2"]]) == Or((eq("a", "1"), eq("b", "2")))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([["a = 1", 3]], "Invalid syntax for the filter parameter: `expected String, found: 3`."),
        (
            [["a = 1"], {"a": [1, None]}],
            'Invalid syntax for the filter parameter: `expected String, [String], found: {"a":[1,null]}`.',
        ),
        (["a = ", [[]]], "Invalid syntax for the filter parameter: `expected String, found: []`."),
        (True, "Invalid syntax for the filter parameter: `expected String, Array, found: true`."),
        ({"x": "é"}, 'Invalid syntax for the filter parameter: `expected String, Array, found: {"x":"é"}`.'),
    ],
)
def test_array_form_type_errors(value: object, message: str) -> None:
    assert error(value) == message


def test_array_form_strings_carry_their_own_positions() -> None:
    assert error(["a = 1", "b ="]) == "Was expecting a value but instead got nothing.\n4:4 b ="


@pytest.mark.parametrize(
    ("text", "sentence", "columns"),
    [
        (
            "channel = Ponce = 12",
            "Found unexpected characters at the end of the filter: `= 12`. You probably forgot an `OR` or an "
            "`AND` rule.",
            "17:21",
        ),
        (
            "title = Glass XOR title = Glass",
            "Found unexpected characters at the end of the filter: `XOR title = Glass`. You probably forgot "
            "an `OR` or an `AND` rule.",
            "15:32",
        ),
        (
            "channel = ponce ORdog != 'bernese mountain'",
            "Found unexpected characters at the end of the filter: `ORdog != \\'bernese mountain\\'`. You "
            "probably forgot an `OR` or an `AND` rule.",
            "17:44",
        ),
        (
            "a = 1AND b = 2",
            "Found unexpected characters at the end of the filter: `b = 2`. You probably forgot an `OR` or "
            "an `AND` rule.",
            "10:15",
        ),
        (
            "channel = mv OR followers >= 1000)",
            "Found unexpected characters at the end of the filter: `)`. You probably forgot an `OR` or an "
            "`AND` rule.",
            "34:35",
        ),
        (
            "channel =    ",
            "Was expecting a value but instead got nothing.",
            "14:14",
        ),
        (
            "channel = 🐻 AND followers < 100",
            "Was expecting a value but instead got `🐻`.",
            "11:12",
        ),
        (
            "x = EXISTS",
            "Was expecting a value but instead got `EXISTS`, which is a reserved keyword. To use `EXISTS` as "
            "a field name or a value, surround it by quotes.",
            "5:11",
        ),
        (
            "AND = 8",
            "Was expecting a value but instead got `AND`, which is a reserved keyword. To use `AND` as a "
            "field name or a value, surround it by quotes.",
            "1:4",
        ),
        (
            "OR",
            "Was expecting a value but instead got `OR`, which is a reserved keyword. To use `OR` as a field "
            "name or a value, surround it by quotes.",
            "1:3",
        ),
        (
            "NOT OR EXISTS AND EXISTS NOT EXISTS",
            "Was expecting a value but instead got `OR`, which is a reserved keyword. To use `OR` as a field "
            "name or a value, surround it by quotes.",
            "5:7",
        ),
        (
            "title & Glass",
            "Was expecting an operation `=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, "
            "`NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, "
            "`STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon` at `title & "
            "Glass`.",
            "1:14",
        ),
        (
            "'OR'",
            "Was expecting an operation `=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, "
            "`NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, "
            "`STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon` at "
            "`\\'OR\\'`.",
            "1:5",
        ),
        (
            "channel = Ponce OR",
            "Was expecting an operation `=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, "
            "`NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, "
            "`STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon` but instead "
            "got nothing.",
            "19:19",
        ),
        (
            "colour NOT EXIST",
            "Was expecting an operation `=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, "
            "`NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, "
            "`STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon` at `colour "
            "NOT EXIST`.",
            "1:17",
        ),
        (
            "subscribers 100 TO1000",
            "Was expecting an operation `=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, "
            "`NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, "
            "`STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon` at "
            "`subscribers 100 TO1000`.",
            "1:23",
        ),
        (
            "value IS NOT",
            "Was expecting an operation `=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, "
            "`NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, "
            "`STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon` at `value IS "
            "NOT`.",
            "1:13",
        ),
        (
            "x STARTS  WITH y",
            "Was expecting an operation `=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, "
            "`NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, "
            "`STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon` at `x STARTS "
            " WITH y`.",
            "1:17",
        ),
        (
            "x = '\\q'",
            "Malformed value: `\\\\q`.",
            "6:8",
        ),
        (
            "'\\q' = x",
            "Was expecting an operation `=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, "
            "`NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, "
            "`STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, `_geoBoundingBox` or `_geoPolygon` at "
            "`\\'\\\\q\\' = x`.",
            "1:9",
        ),
        (
            "x = 'ab\\",
            "Malformed value: `ab\\\\`.",
            "6:9",
        ),
        (
            "x = '\\u12'",
            "Malformed value: `\\\\u12`.",
            "6:10",
        ),
        (
            "x = '\\u{110000}'",
            "Malformed value: `\\\\u{110000}`.",
            "6:16",
        ),
        (
            "x = '\\u{zz}'",
            "Found an invalid escaped sequence number: `\\\\u{zz}`.",
            "6:12",
        ),
        (
            "x = '\\xZZ'",
            "Found an invalid escaped sequence number: `\\\\xZZ`.",
            "6:10",
        ),
        (
            "channel = 'ponce",
            "Expression `\\'ponce` is missing the following closing delimiter: `'`.",
            "11:17",
        ),
        (
            'channel = "ponce',
            'Expression `\\"ponce` is missing the following closing delimiter: `"`.',
            "11:17",
        ),
        (
            "channel = mv OR (followers >= 1000",
            "Expression `(followers >= 1000` is missing the following closing delimiter: `)`.",
            "17:35",
        ),
        (
            "colour IN blue, green]",
            "Expected `[` after `IN` keyword.",
            "11:23",
        ),
        (
            "colour IN [blue, green",
            "Expected matching `]` after the list of field names given to `IN[`",
            "23:23",
        ),
        (
            "colour IN [blue, green, 'blue' > 2]",
            "Expected only comma-separated field names inside `IN[..]` but instead found `> 2]`.",
            "32:36",
        ),
        (
            "colour IN [blue, green, AND]",
            "Expected only comma-separated field names inside `IN[..]` but instead found `AND]`.",
            "25:29",
        ),
        (
            "colour IN ['blue, green",
            "Expression `\\'blue, green` is missing the following closing delimiter: `'`.",
            "12:24",
        ),
        (
            "_geoPoint(12, 13, 14)",
            "`_geoPoint` is a reserved keyword and thus can't be used as a filter expression. Use the "
            "`_geoRadius(latitude, longitude, distance)` or `_geoBoundingBox([latitude, longitude], "
            "[latitude, longitude])` built-in rules to filter on `_geo` coordinates.",
            "1:22",
        ),
        (
            "position <= _geoPoint(12, 13, 14)",
            "`_geoPoint` is a reserved keyword and thus can't be used as a filter expression. Use the "
            "`_geoRadius(latitude, longitude, distance)` or `_geoBoundingBox([latitude, longitude], "
            "[latitude, longitude])` built-in rules to filter on `_geo` coordinates.",
            "13:34",
        ),
        (
            "_geoDistance = 1",
            "`_geoDistance` is a reserved keyword and thus can't be used as a filter expression. Use the "
            "`_geoRadius(latitude, longitude, distance)` or `_geoBoundingBox([latitude, longitude], "
            "[latitude, longitude])` built-in rules to filter on `_geo` coordinates.",
            "1:17",
        ),
        (
            "_geo(12, 13, 14)",
            "`_geo` is a reserved keyword and thus can't be used as a filter expression. Use the "
            "`_geoRadius(latitude, longitude, distance)` or `_geoBoundingBox([latitude, longitude], "
            "[latitude, longitude])` built-in rules to filter on `_geo` coordinates.",
            "1:17",
        ),
        (
            "_geo EXISTS",
            "`_geo` is a reserved keyword and thus can't be used as a filter expression. Use the "
            "`_geoRadius(latitude, longitude, distance)` or `_geoBoundingBox([latitude, longitude], "
            "[latitude, longitude])` built-in rules to filter on `_geo` coordinates.",
            "1:12",
        ),
        (
            "position <= _geoRadius(12, 13, 14)",
            "The `_geoRadius` filter is an operation and can't be used as a value.",
            "13:35",
        ),
        (
            "x = _geoBoundingBox",
            "The `_geoBoundingBox` filter is an operation and can't be used as a value.",
            "5:20",
        ),
    ],
)
def test_parse_errors(text: str, sentence: str, columns: str) -> None:
    assert error(text) == f"{sentence}\n{columns} {text}"


def test_depth_limit() -> None:
    assert parsed("(" * 36 + "x = 1" + ")" * 36) == eq("x", "1")
    deep = "(" * 37 + "x = 1" + ")" * 37
    assert error(deep) == (
        "The filter exceeded the maximum depth limit. Try rewriting the filter so that it contains fewer"
        f" nested conditions.\n38:80 {deep}"
    )
    nots = "NOT " * 147 + "x = 1"
    assert parsed(nots) == Not(eq("x", "1"))
    assert error("NOT " + nots).endswith(f"\n593:598 NOT {nots}")


def test_unprintable_characters_are_escaped_in_messages() -> None:
    assert error("x\u0001 = 1") == f"{OPERATIONS} at `x\\u{{1}} = 1`.\n1:7 x\u0001 = 1"


def test_foreign_conditions_keep_their_place_and_condition() -> None:
    text = "year > 1 OR\n_foreign(author, country = fr )"
    tree = parse_filter(text)
    assert isinstance(tree, Or)
    node = tree.children[1]
    assert isinstance(node, Foreign)
    assert node.field.text == "author" and text[node.start : node.end] == "_foreign(author, country = fr )"
    assert isinstance(node.condition, Compare) and node.condition.field.text == "country"
    # Blanked around the condition, line breaks kept: errors found in it point into ``text``.
    assert node.inner == "           \n                 country = fr "


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "_foreign(author country = fr)",
            "Was expecting a field name and an condition inside `_foreign(..)` filter but instead found"
            " `country = fr)`.\n17:30 _foreign(author country = fr)",
        ),
        (
            "_foreign(author, country = fr",
            "Was expecting a field name and an condition inside `_foreign(..)` filter but instead found"
            " ``.\n30:30 _foreign(author, country = fr",
        ),
    ],
)
def test_malformed_foreign_conditions(text: str, message: str) -> None:
    with pytest.raises(FilterError) as raised:
        parse_filter(text)
    assert raised.value.message == message
