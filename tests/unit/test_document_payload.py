"""Document payloads (core.md §1.5): format selection, JSON / NDJSON / CSV decoding, and every error message
to the character, since SDKs and users match on them."""

from __future__ import annotations

import gc
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common.documents import PayloadFormat, parse_payload
from common.errors import ApiError

ACCEPTED = (
    "Accepted values for the Content-Type header are: `application/json`, `application/x-ndjson`, `text/csv`"
)
JSON = PayloadFormat("json")
NDJSON = PayloadFormat("ndjson")
CSV = PayloadFormat("csv")


def failure(body: bytes, fmt: PayloadFormat) -> ApiError:
    with pytest.raises(ApiError) as caught:
        parse_payload(body, fmt)
    return caught.value


def format_failure(content_type: str | None, delimiter: str | None = None) -> ApiError:
    with pytest.raises(ApiError) as caught:
        PayloadFormat.from_content_type(content_type, delimiter)
    return caught.value


def json_malformed(kind: str, detail: str) -> str:
    return f"The `{kind}` payload provided is malformed. `Couldn't serialize document value: {detail}`."


def csv_malformed(detail: str) -> str:
    return f"The `csv` payload provided is malformed: `{detail}`."


SHAPE = "data are neither an object nor a list of objects"


# --- Content-Type -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("application/json", PayloadFormat("json")),
        ("application/json; charset=utf-8", PayloadFormat("json")),
        ("Application/JSON", PayloadFormat("json")),
        ("application/x-ndjson", PayloadFormat("ndjson")),
        ("text/csv", PayloadFormat("csv", ",")),
        ('text/csv; charset="utf-8"', PayloadFormat("csv", ",")),
    ],
)
def test_content_type_selects_format_ignoring_parameters(content_type: str, expected: PayloadFormat) -> None:
    assert PayloadFormat.from_content_type(content_type, None) == expected


def test_csv_delimiter_is_kept() -> None:
    assert PayloadFormat.from_content_type("text/csv", ";") == PayloadFormat("csv", ";")


def test_missing_content_type() -> None:
    error = format_failure(None)
    assert (error.status, error.code, error.type) == (415, "missing_content_type", "invalid_request")
    assert error.message == f"A Content-Type header is missing. {ACCEPTED}"


@pytest.mark.parametrize(
    ("content_type", "echoed"),
    [
        ("text/plain", "text/plain"),
        ("application/xml; charset=utf-8", "application/xml"),  # parsable: only type/subtype is echoed
        ("application/json+ld", "application/json+ld"),  # `+json` suffixes are for JSON-body routes only
        ("garbage", "garbage"),  # unparsable: the raw header is echoed
        ("", ""),
    ],
)
def test_invalid_content_type(content_type: str, echoed: str) -> None:
    error = format_failure(content_type)
    assert (error.status, error.code) == (415, "invalid_content_type")
    assert error.message == f"The Content-Type `{echoed}` is invalid. {ACCEPTED}"


@pytest.mark.parametrize("content_type", ["application/json", "application/x-ndjson"])
def test_csv_delimiter_with_non_csv_content_type(content_type: str) -> None:
    error = format_failure(f"{content_type}; charset=utf-8", ";")
    assert (error.status, error.code) == (415, "invalid_content_type")
    assert error.message == (
        f"The Content-Type `{content_type}` does not support the use of a csv delimiter."
        " The csv delimiter can only be used with the Content-Type `text/csv`."
    )


@pytest.mark.parametrize(("delimiter", "count"), [(";;", 2), ("", 0), ("doggo", 5)])
def test_csv_delimiter_must_be_one_character(delimiter: str, count: int) -> None:
    error = format_failure("text/csv", delimiter)
    assert (error.status, error.code) == (400, "invalid_document_csv_delimiter")
    assert error.message == (
        "Invalid value in parameter `csvDelimiter`: expected a string of one character, but found the"
        f" following string of {count} characters: `{delimiter}`"
    )


def test_csv_delimiter_must_be_ascii() -> None:
    error = format_failure("text/csv", "🍰")
    assert (error.status, error.code) == (400, "invalid_document_csv_delimiter")
    assert error.message == "csv delimiter must be an ascii character. Found: `🍰`"


def test_delimiter_is_checked_before_the_content_type() -> None:
    assert format_failure(None, "ab").code == "invalid_document_csv_delimiter"


# --- Empty payloads ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [JSON, NDJSON, CSV])
def test_empty_body_is_missing_payload(fmt: PayloadFormat) -> None:
    error = failure(b"", fmt)
    assert (error.status, error.code) == (400, "missing_payload")
    assert error.message == f"A {fmt.kind} payload is missing."


# --- JSON -------------------------------------------------------------------------------------------------


def test_json_single_object_and_array() -> None:
    assert parse_payload(b'{"id": 1}', JSON) == [{"id": 1}]
    assert parse_payload(b'[{"id": 1}, {"id": "b"}]', JSON) == [{"id": 1}, {"id": "b"}]
    assert parse_payload(b"[]", JSON) == []


def test_json_keeps_nested_objects_and_field_order() -> None:
    (document,) = parse_payload(b'{"z": 1, "a": {"y": [1, {"b": null}], "x": 2.5}, "m": true}', JSON)
    assert document == {"z": 1, "a": {"y": [1, {"b": None}], "x": 2.5}, "m": True}
    assert list(document) == ["z", "a", "m"]
    assert list(document["a"]) == ["y", "x"]


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b'{"id": 1,', "EOF while parsing a value at line 1 column 9"),
        (b'[{"id": 1},]', "trailing comma at line 1 column 12"),
        (b'{"id": 1}\n  x', "trailing characters at line 2 column 3"),
        (b"   ", "EOF while parsing a value at line 1 column 3"),
        (b'{"id": tru}', "expected ident at line 1 column 11"),
        (b'[{"id": 1} {"id": 2}]', "expected `,` or `]` at line 1 column 12"),
    ],
)
def test_json_syntax_errors_use_serde_wording(body: bytes, detail: str) -> None:
    error = failure(body, JSON)
    assert (error.status, error.code) == (400, "malformed_payload")
    assert error.message == json_malformed("json", detail)


@pytest.mark.parametrize(
    "body", [b"[1, 2]", b'[{"id": 1}, "x"]', b'"doggo"', b"null", b"12", b"12 x", b"[[]]"]
)
def test_json_of_the_wrong_shape(body: bytes) -> None:
    assert failure(body, JSON).message == json_malformed("json", SHAPE)


def test_long_messages_are_truncated() -> None:
    from common.documents.payload import _malformed

    message = "".join(chr(ord("a") + i % 26) for i in range(200))
    truncated = _malformed("json", message).message
    assert truncated == json_malformed("json", f"{message[:50]}...{message[-85:]}")
    assert _malformed("json", message[:138]).message == json_malformed("json", message[:138])


def test_large_malformed_json_keeps_orjson_position() -> None:
    body = b"[" + b'{"id": 1},' * 30_000 + b"]"  # > 256 KiB: serde's scanner is not run
    message = failure(body, JSON).message
    assert message.startswith(
        "The `json` payload provided is malformed. `Couldn't serialize document value: "
    )
    assert "at line 1 column" in message


# --- NDJSON -----------------------------------------------------------------------------------------------


def test_ndjson_skips_blank_lines_and_accepts_crlf() -> None:
    body = b'{"id": 1, "b": {"c": 2}}\n\n   \n{"id": 2}\r\n\n'
    assert parse_payload(body, NDJSON) == [{"id": 1, "b": {"c": 2}}, {"id": 2}]


def test_ndjson_whitespace_only_has_no_documents() -> None:
    assert parse_payload(b"\n \n\t\n", NDJSON) == []


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b'{"id": 1}\n{id: 2}\n', "key must be a string at line 2 column 2"),
        (b'{"id": 1}\n\n\n{"id": 2\n', "EOF while parsing an object at line 4 column 8"),
        (b'{"id": 1}\n{"id": 2} {"id": 3}', "trailing characters at line 2 column 11"),
        (b'{"id": 1}\n  {"id": @}', "expected value at line 2 column 10"),
    ],
)
def test_ndjson_malformed_line_is_located_in_the_body(body: bytes, detail: str) -> None:
    error = failure(body, NDJSON)
    assert (error.status, error.code) == (400, "malformed_payload")
    assert error.message == json_malformed("ndjson", detail)


@pytest.mark.parametrize("line", [b"[1, 2]", b"[1, 2", b'"x"', b"3 4", b"null"])
def test_ndjson_non_object_line(line: bytes) -> None:
    assert failure(b'{"id": 1}\n' + line + b"\n", NDJSON).message == json_malformed("ndjson", SHAPE)


def test_ndjson_shape_error_is_reported_before_a_later_syntax_error() -> None:
    assert failure(b'{"id": 1}\n2\n{"id": \n', NDJSON).message == json_malformed("ndjson", SHAPE)


# --- CSV --------------------------------------------------------------------------------------------------


def test_csv_typed_headers() -> None:
    body = (
        b"id,price:number,ok:boolean,a:b:number,when:date,label:string\n"
        b"1,-3,true,1e3,2024-01-01,x\n"
        b"2, 1.5 , false ,-0.25,,\n"
    )
    assert parse_payload(body, CSV) == [
        {"id": "1", "price": -3, "ok": True, "a:b": 1000.0, "when:date": "2024-01-01", "label": "x"},
        {"id": "2", "price": 1.5, "ok": False, "a:b": -0.25, "when:date": None, "label": None},
    ]


def test_csv_empty_cells_are_null_in_every_type() -> None:
    body = b"s,n:number,b:boolean\n,,\n"
    assert parse_payload(body, CSV) == [{"s": None, "n": None, "b": None}]


def test_csv_whitespace_cells() -> None:
    # Strings are kept verbatim; typed cells are trimmed first, so blank typed cells are null.
    body = b"s,n:number,b:boolean\n  ,  , \t\n"
    assert parse_payload(body, CSV) == [{"s": "  ", "n": None, "b": None}]


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("42", 42),
        ("-42", -42),
        ("+7", 7),
        ("007", 7),
        ("9223372036854775807", 9223372036854775807),
        ("9223372036854775808", 9223372036854775808.0),  # past i64: parsed as f64
        ("1.5", 1.5),
        (".5", 0.5),
        ("5.", 5.0),
        ("1e3", 1000.0),
        ("-1E-2", -0.01),
        ("NaN", None),  # f64 accepts them, JSON cannot hold them
        ("-inf", None),
    ],
)
def test_csv_number_cells(cell: str, value: object) -> None:
    (document,) = parse_payload(f"n:number\n{cell}\n".encode(), CSV)
    assert document == {"n": value}
    assert type(document["n"]) is type(value)


@pytest.mark.parametrize(
    ("cell", "shown"), [("12abc", '"12abc"'), (" 1_000", '" 1_000"'), ("٣", '"٣"'), ("0x10", '"0x10"')]
)
def test_csv_bad_number(cell: str, shown: str) -> None:
    error = failure(f"id,n:number\n1,2\n2,{cell}\n".encode(), CSV)
    assert (error.status, error.code) == (400, "malformed_payload")
    assert error.message == csv_malformed(f"Error parsing number {shown} at line 2: invalid float literal")


def test_csv_bad_boolean() -> None:
    error = failure(b"b:boolean\nTrue\n", CSV)
    assert error.message == csv_malformed(
        'Error parsing boolean "True" at line 1: provided string was not `true` or `false`'
    )


def test_csv_bad_cell_is_quoted_like_rust_debug() -> None:
    error = failure(b'n:number\n"a\\b""c\td\x01"\n', CSV)
    assert error.message == csv_malformed(
        'Error parsing number "a\\\\b\\"c\\td\\u{1}" at line 1: invalid float literal'
    )


def test_csv_quoted_delimiters_newlines_and_quotes() -> None:
    body = b'id,text\n1,"a, b"\n2,"line\nbreak"\n3,"say ""hi"""\n'
    assert parse_payload(body, CSV) == [
        {"id": "1", "text": "a, b"},
        {"id": "2", "text": "line\nbreak"},
        {"id": "3", "text": 'say "hi"'},
    ]


def test_csv_custom_delimiter() -> None:
    body = b'id;price:number;tags\n1;2.5;"a;b"\n2;3;a,b\n'
    assert parse_payload(body, PayloadFormat("csv", ";")) == [
        {"id": "1", "price": 2.5, "tags": "a;b"},
        {"id": "2", "price": 3, "tags": "a,b"},
    ]


def test_csv_blank_lines_bom_crlf_and_field_order() -> None:
    body = b"\xef\xbb\xbf\r\nz,a,m\r\n\r\n1,2,3\r\n"
    (document,) = parse_payload(body, CSV)
    assert document == {"z": "1", "a": "2", "m": "3"}
    assert list(document) == ["z", "a", "m"]


def test_csv_header_only_has_no_documents() -> None:
    assert parse_payload(b"id,name\n", CSV) == []


def test_csv_record_with_wrong_field_count() -> None:
    error = failure(b"id,name\n1,a\n2,b,c\n", CSV)
    assert (error.status, error.code) == (400, "malformed_payload")
    assert error.message == csv_malformed(
        "CSV error: record 2 (line: 3, byte: 12): found record with 3 fields, but the previous record has 2"
        " fields"
    )


def test_csv_field_count_position_counts_multiline_records_and_bom() -> None:
    body = b'\xef\xbb\xbfid,name\n1,"a\nb"\n\n2\n'
    assert failure(body, CSV).message == csv_malformed(
        "CSV error: record 2 (line: 5, byte: 20): found record with 1 fields, but the previous record has 2"
        " fields"
    )


def test_csv_invalid_utf8() -> None:
    error = failure(b"id,name\n1,ok\n2,ab\xffc\n", CSV)
    assert error.message == csv_malformed(
        "CSV parse error: record 2 (line 3, field: 1, byte: 13): invalid utf-8: invalid UTF-8 in field 1 near"
        " byte index 2"
    )


def test_csv_fields_longer_than_the_stdlib_default_limit() -> None:
    big = "x" * 200_000
    assert parse_payload(f"id,text\n1,{big}\n".encode(), CSV) == [{"id": "1", "text": big}]


# --- Properties and housekeeping --------------------------------------------------------------------------

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3),
    max_leaves=10,
)
_documents = st.lists(st.dictionaries(st.text(), _json_values, max_size=5), max_size=5)


@settings(max_examples=100, deadline=None)
@given(_documents)
def test_json_and_ndjson_round_trip(documents: list[dict[str, Any]]) -> None:
    assert parse_payload(orjson.dumps(documents), JSON) == documents
    ndjson = b"\n".join(orjson.dumps(document) for document in documents) + b"\n"
    if documents:
        assert parse_payload(ndjson, NDJSON) == documents


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.text(alphabet=st.characters(codec="utf-8")), min_size=2, max_size=2)))
def test_csv_string_cells_round_trip(rows: list[list[str]]) -> None:
    import csv
    import io

    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(["a", "b"])
    writer.writerows(rows)
    expected = [{"a": a or None, "b": b or None} for a, b in rows]
    assert parse_payload(out.getvalue().encode(), CSV) == expected


def test_gc_state_is_restored() -> None:
    assert gc.isenabled()
    parse_payload(b'[{"id": 1}]', JSON)
    assert gc.isenabled()
    failure(b"[", JSON)
    assert gc.isenabled()
    gc.disable()
    try:
        parse_payload(b'{"id": 1}', JSON)
        assert not gc.isenabled()
    finally:
        gc.enable()
