"""Primary-key inference and document ids (core.md §3.3): the rules and the exact task error messages."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from common.documents import (
    DocumentError,
    extract_document_id,
    infer_primary_key,
    invalid_document_id_error,
    is_valid_document_id,
)

NO_CANDIDATE = (
    "The primary key inference failed as the engine did not find any field ending with `id` in its name."
    " Please specify the primary key manually using the `primaryKey` query parameter."
)
ID_RULE = (
    "is invalid. A document identifier can be of type integer or string, only composed of alphanumeric"
    " characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes."
)


def id_failure(document: dict[str, Any], primary_key: str = "id") -> DocumentError:
    with pytest.raises(DocumentError) as caught:
        extract_document_id(document, primary_key)
    return caught.value


# --- Inference --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"id": 1, "title": "a"}, "id"),
        ({"title": "a", "ID": 1}, "ID"),
        ({"movieId": 1, "title": "a"}, "movieId"),
        ({"uuid": "x", "name": "n"}, "uuid"),
        ({"title": "a", "nested": {"id": 1}, "product_Id": 3}, "product_Id"),
    ],
)
def test_single_candidate_is_the_primary_key(document: dict[str, Any], expected: str) -> None:
    assert infer_primary_key(document) == expected


@pytest.mark.parametrize("document", [None, {}, {"title": "a", "identity": 1, "nested": {"id": 1}}])
def test_no_candidate(document: dict[str, Any] | None) -> None:
    with pytest.raises(DocumentError) as caught:
        infer_primary_key(document)
    assert caught.value.code == "index_primary_key_no_candidate_found"
    assert caught.value.message == NO_CANDIDATE


def test_several_candidates_name_the_first_two_sorted() -> None:
    with pytest.raises(DocumentError) as caught:
        infer_primary_key({"zid": 1, "title": "a", "id": 2, "Bid": 3})
    assert caught.value.code == "index_primary_key_multiple_candidates_found"
    assert caught.value.message == (
        "The primary key inference failed as the engine found 3 fields ending with `id` in their names: 'Bid'"
        " and 'id'. Please specify the primary key manually using the `primaryKey` query parameter."
    )


def test_document_error_to_task_error() -> None:
    with pytest.raises(DocumentError) as caught:
        infer_primary_key(None)
    assert caught.value.to_error() == {
        "message": NO_CANDIDATE,
        "code": "index_primary_key_no_candidate_found",
        "type": "invalid_request",
        "link": "https://docs.meilisearch.com/errors#index_primary_key_no_candidate_found",
    }


def test_document_error_refuses_unknown_codes() -> None:
    with pytest.raises(ValueError, match="unknown error code"):
        DocumentError("no_such_code", "x")


# --- Id extraction ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, "1"),
        (0, "0"),
        (-42, "-42"),
        (18446744073709551615, "18446744073709551615"),
        ("abc-DEF_09", "abc-DEF_09"),
        ("a" * 511, "a" * 511),
        ("-", "-"),
    ],
)
def test_valid_ids(value: object, expected: str) -> None:
    assert extract_document_id({"title": "t", "id": value}, "id") == expected


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("x y", '"x y"'),
        ("", '""'),
        ("a" * 512, '"' + "a" * 512 + '"'),
        ("café", '"café"'),
        ("a.b", '"a.b"'),
        (" 1", '" 1"'),
        (1.5, "1.5"),
        (1.0, "1.0"),
        (True, "true"),
        (None, "null"),
        ([1], "[1]"),
        ({"b": 1, "a": 2}, '{"b":1,"a":2}'),
    ],
)
def test_invalid_ids(value: object, shown: str) -> None:
    error = id_failure({"id": value})
    assert error.code == "invalid_document_id"
    assert error.message == f"Document identifier `{shown}` {ID_RULE}"


def test_missing_id_shows_the_compact_document_in_order() -> None:
    error = id_failure({"title": "Carol", "tags": ["a", "b"], "n": {"y": 1, "x": None}}, "id")
    assert error.code == "missing_document_id"
    assert error.message == (
        'Document doesn\'t have a `id` attribute: `{"title":"Carol","tags":["a","b"],"n":{"y":1,"x":null}}`.'
    )


def test_missing_id_keeps_non_ascii_text() -> None:
    error = id_failure({"titre": "été"}, "ref")
    assert error.message == 'Document doesn\'t have a `ref` attribute: `{"titre":"été"}`.'


def test_primary_key_lookup_is_case_sensitive() -> None:
    assert id_failure({"ID": 1}).code == "missing_document_id"


# --- Nested primary keys ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "document",
    [
        {"a": {"b": 7}},
        {"a.b": 7},
        {"a": {"b": 7, "c": 1}, "b": 2},
        {"a": {"c": 1}, "a.b": 7},
    ],
)
def test_nested_primary_key(document: dict[str, Any]) -> None:
    assert extract_document_id(document, "a.b") == "7"


def test_deep_nested_primary_key_mixes_dotted_and_nested_names() -> None:
    assert extract_document_id({"a": {"b.c": {"d": "x1"}}}, "a.b.c.d") == "x1"


@pytest.mark.parametrize("document", [{"a": 1}, {"a": [{"b": 1}]}, {"ab": 1}, {"a": {"bc": 1}}, {}])
def test_nested_primary_key_missing(document: dict[str, Any]) -> None:
    error = id_failure(document, "a.b")
    assert error.code == "missing_document_id"
    assert error.message.startswith("Document doesn't have a `a.b` attribute: `")


def test_nested_primary_key_with_several_values() -> None:
    error = id_failure({"a": {"b": 1}, "a.b": 2}, "a.b")
    assert error.code == "invalid_document_id"
    assert error.message == 'Document have too many matching `a.b` attribute: `{"a":{"b":1},"a.b":2}`.'


def test_nested_primary_key_with_invalid_value() -> None:
    error = id_failure({"a": {"b": "no way"}}, "a.b")
    assert error.message == f'Document identifier `"no way"` {ID_RULE}'


# --- Sync validation of `{id}` and `ids` ------------------------------------------------------------------


@pytest.mark.parametrize("text", ["1", "-1", "abc_DEF-9", "a" * 511])
def test_is_valid_document_id(text: str) -> None:
    assert is_valid_document_id(text)


@pytest.mark.parametrize("text", ["", "a b", "a" * 512, "é", "a\n", "1.5", "a/b"])
def test_is_not_valid_document_id(text: str) -> None:
    assert not is_valid_document_id(text)


def test_invalid_document_id_error_for_read_routes() -> None:
    error = invalid_document_id_error("a b")
    assert (error.code, error.message) == ("invalid_document_id", f'Document identifier `"a b"` {ID_RULE}')


@given(st.text(max_size=600))
def test_string_ids_agree_with_the_sync_check(text: str) -> None:
    try:
        assert extract_document_id({"id": text}, "id") == text
        assert is_valid_document_id(text)
    except DocumentError:
        assert not is_valid_document_id(text)
        valid = 0 < len(text.encode()) <= 511 and all(
            c.isascii() and (c.isalnum() or c in "-_") for c in text
        )
        assert not valid
