"""The error table and ApiError must match core.md §2 exactly: clients switch on code, type and status."""

from __future__ import annotations

import pytest

from common import errors
from common.errors import CONTRACT_CODES, ERROR_CODES, SIFT_CODES, ApiError

IO_HINT = (
    ". This error generally happens when you have no space left on device or when your database doesn't have"
    " read or write right."
)


def test_table_has_every_contract_code_once() -> None:
    assert len(CONTRACT_CODES) == 288
    assert next(iter(CONTRACT_CODES)) == "api_key_already_exists"
    assert list(CONTRACT_CODES)[-1] == "dynamic_search_rule_not_found"


def test_sift_codes_are_apart_from_the_contract() -> None:
    assert SIFT_CODES and not SIFT_CODES.keys() & CONTRACT_CODES.keys()
    assert ERROR_CODES == CONTRACT_CODES | SIFT_CODES


def test_table_types_and_statuses_are_from_the_contract() -> None:
    assert {kind for _, kind in ERROR_CODES.values()} == {"invalid_request", "internal", "auth", "system"}
    assert {status for status, _ in ERROR_CODES.values()} == {
        400,
        401,
        403,
        404,
        409,
        412,
        413,
        415,
        422,
        451,
        500,
        501,
        502,
        503,
    }
    assert sum(1 for entry in ERROR_CODES.values() if entry == (400, "invalid_request")) == 239


@pytest.mark.parametrize(
    ("code", "status", "kind"),
    [
        ("bad_request", 400, "invalid_request"),
        ("missing_authorization_header", 401, "auth"),
        ("missing_master_key", 401, "auth"),
        ("invalid_api_key", 403, "auth"),
        ("remote_invalid_api_key", 403, "auth"),
        ("index_not_found", 404, "invalid_request"),
        ("webhook_not_found", 404, "invalid_request"),
        ("api_key_already_exists", 409, "invalid_request"),
        ("index_already_exists", 409, "invalid_request"),
        ("network_version_mismatch", 412, "invalid_request"),
        ("payload_too_large", 413, "invalid_request"),
        ("missing_content_type", 415, "invalid_request"),
        ("invalid_content_type", 415, "invalid_request"),
        ("unsupported_media_type", 415, "invalid_request"),
        ("io_error", 422, "system"),
        ("no_space_left_on_device", 422, "system"),
        ("too_many_open_files", 422, "system"),
        ("requires_enterprise_edition", 451, "invalid_request"),
        ("internal", 500, "internal"),
        ("database_size_limit_reached", 500, "internal"),
        ("unimplemented_non_streaming_chat_completions", 501, "invalid_request"),
        ("remote_bad_response", 502, "system"),
        ("too_many_search_requests", 503, "system"),
        ("import_task_without_network_task", 503, "invalid_request"),
        ("unretrievable_document", 400, "internal"),
        ("invalid_s_3_snapshot_request", 400, "internal"),
        ("invalid_s_3_snapshot_parameters", 400, "internal"),
        ("s_3_snapshot_server_error", 502, "internal"),
        ("invalid_search_q", 400, "invalid_request"),
        ("invalid_task_uids", 400, "invalid_request"),
    ],
)
def test_status_and_type_come_from_the_code(code: str, status: int, kind: str) -> None:
    error = ApiError(code, "boom")
    assert (error.status, error.type) == (status, kind)


@pytest.mark.parametrize(
    # The OpenAPI spelling of the S3 codes and codes only the docs list are not emitted by the reference.
    "code",
    ["invalid_s3_snapshot_request", "not_found", "invalid_task_index_uids", "immutable_index_uid", ""],
)
def test_unknown_code_is_a_programming_error(code: str) -> None:
    with pytest.raises(ValueError, match="unknown error code"):
        ApiError(code, "boom")


def test_wire_object_has_contract_keys_in_order() -> None:
    error = ApiError("index_not_found", "Index `movies` not found.")
    wire = error.to_dict()
    assert list(wire) == ["message", "code", "type", "link"]
    assert wire == {
        "message": "Index `movies` not found.",
        "code": "index_not_found",
        "type": "invalid_request",
        "link": "https://docs.meilisearch.com/errors#index_not_found",
    }
    assert str(error) == "Index `movies` not found."
    assert isinstance(error, Exception)


def test_io_error_message_gets_the_hint_once() -> None:
    error = ApiError("io_error", "Input/output error (os error 5)")
    assert error.message == "Input/output error (os error 5)" + IO_HINT
    assert ApiError("io_error", error.message).message == error.message
    assert ApiError("internal", "x").message == "x"


def test_named_constructors_use_contract_wording() -> None:
    cases = [
        (errors.index_not_found("movies"), "index_not_found", 404, "Index `movies` not found."),
        (
            errors.invalid_index_uid("test test#!"),
            "invalid_index_uid",
            400,
            "`test test#!` is not a valid index uid. Index uid can be an integer or a string containing only "
            "alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.",
        ),
        (errors.missing_payload("json"), "missing_payload", 400, "A json payload is missing."),
        (errors.missing_payload("ndjson"), "missing_payload", 400, "A ndjson payload is missing."),
        (
            errors.malformed_json("EOF while parsing an object at line 1 column 22"),
            "malformed_payload",
            400,
            "The json payload provided is malformed. `EOF while parsing an object at line 1 column 22`.",
        ),
        (
            errors.payload_too_large("100 MB"),
            "payload_too_large",
            413,
            "The provided payload reached the size limit. The maximum accepted payload size is 100 MB.",
        ),
        (
            errors.missing_content_type(["application/json"]),
            "missing_content_type",
            415,
            "A Content-Type header is missing. Accepted values for the Content-Type header are: "
            "`application/json`",
        ),
        (
            errors.missing_content_type(["application/json", "application/x-ndjson", "text/csv"]),
            "missing_content_type",
            415,
            "A Content-Type header is missing. Accepted values for the Content-Type header are: "
            "`application/json`, `application/x-ndjson`, `text/csv`",
        ),
        (
            errors.invalid_content_type("text/plain", ["application/json"]),
            "invalid_content_type",
            415,
            "The Content-Type `text/plain` is invalid. Accepted values for the Content-Type header are: "
            "`application/json`",
        ),
    ]
    for error, code, status, message in cases:
        assert (error.code, error.status, error.message) == (code, status, message)
