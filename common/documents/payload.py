"""Document add/update payloads: Content-Type selection and JSON / NDJSON / CSV decoding (core.md §1.5).

Valid payloads take the fast path (one `orjson.loads` for JSON, one per line for NDJSON); the serde-style
diagnostics of ``common.validation.json_body`` are only computed once a payload has been found malformed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson

from common.documents.csv_format import parse_csv
from common.errors import ApiError, invalid_content_type, missing_content_type, missing_payload
from common.gcpause import gc_paused
from common.validation.json_body import depth_error, serde_syntax_error, too_deep

PayloadKind = Literal["json", "ndjson", "csv"]
Document = dict[str, Any]

ACCEPTED_CONTENT_TYPES: Final = ("application/json", "application/x-ndjson", "text/csv")
_KINDS: Final[dict[str, PayloadKind]] = {
    "application/json": "json",
    "application/x-ndjson": "ndjson",
    "text/csv": "csv",
}
_TOKEN: Final = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_MEDIA_TYPE: Final = re.compile(
    rf'\s*({_TOKEN})/({_TOKEN})(?:\s*;\s*{_TOKEN}=(?:{_TOKEN}|"(?:[^"\\]|\\.)*"))*\s*;?\s*', re.S
)
_DATA_SHAPE: Final = "data are neither an object nor a list of objects"
_SCAN_LIMIT: Final = 256 * 1024  # serde_syntax_error costs ~1 s/MB: bigger bodies keep orjson's message
_FIRST_BYTE: Final = re.compile(rb"[^ \t\n\r]")
_POSITION: Final = re.compile(r"(.*) at line (\d+) column (\d+)", re.S)


@dataclass(frozen=True, slots=True)
class PayloadFormat:
    """How a document payload is encoded; ``csv_delimiter`` only matters for CSV."""

    kind: PayloadKind
    csv_delimiter: str = ","

    @classmethod
    def from_content_type(cls, content_type: str | None, csv_delimiter: str | None) -> PayloadFormat:
        """The format a request selects; the `csvDelimiter` query value is checked first, as it is parsed
        with the query string, before the handler looks at the Content-Type."""
        if csv_delimiter is not None:
            _check_delimiter(csv_delimiter)
        if content_type is None:
            raise missing_content_type(ACCEPTED_CONTENT_TYPES)
        match = _MEDIA_TYPE.fullmatch(content_type)
        if match is None:
            raise invalid_content_type(content_type, ACCEPTED_CONTENT_TYPES)
        essence = f"{match[1]}/{match[2]}".lower()  # parameters (charset, …) are ignored
        kind = _KINDS.get(essence)
        if kind is None:
            raise invalid_content_type(essence, ACCEPTED_CONTENT_TYPES)
        if csv_delimiter is None:
            return cls(kind)
        if kind != "csv":
            raise ApiError(
                "invalid_content_type",
                f"The Content-Type `{essence}` does not support the use of a csv delimiter. The csv delimiter"
                " can only be used with the Content-Type `text/csv`.",
            )
        return cls(kind, csv_delimiter)


def _check_delimiter(delimiter: str) -> None:
    if len(delimiter) != 1:
        raise ApiError(
            "invalid_document_csv_delimiter",
            "Invalid value in parameter `csvDelimiter`: expected a string of one character, but found the"
            f" following string of {len(delimiter)} characters: `{delimiter}`",
        )
    if not delimiter.isascii():
        raise ApiError(
            "invalid_document_csv_delimiter",
            f"csv delimiter must be an ascii character. Found: `{delimiter}`",
        )


def parse_payload(body: bytes, fmt: PayloadFormat) -> list[Document]:
    """The documents of a (decompressed) payload, each keeping its field order."""
    if not body:
        raise missing_payload(fmt.kind)
    with gc_paused():
        if fmt.kind == "json":
            return _parse_json(body)
        if fmt.kind == "ndjson":
            return _parse_ndjson(body)
        return parse_csv(body, fmt.csv_delimiter)


def stored_payload(body: bytes, fmt: PayloadFormat, documents: list[Document]) -> bytes:
    """What the scheduler stores for an addition: a JSON or NDJSON body as it was sent (``GET
    /tasks/{uid}/documents`` shows it as the reference does; the batch parses it again, as it parsed
    the re-encoded array before), a CSV body as the JSON array of its documents."""
    return orjson.dumps(documents) if fmt.kind == "csv" else body


def stored_documents(payload: bytes, kind: str | None) -> list[Document]:
    """The documents of a stored payload; ``kind``: the task's ``payloadFormat`` (tasks stored before
    it existed hold a JSON array)."""
    with gc_paused():
        if kind == "ndjson":
            return _parse_ndjson(payload)
        value = orjson.loads(payload)
    return [value] if type(value) is dict else list(value)


def _malformed(kind: PayloadKind, message: str) -> ApiError:
    """Long messages keep their first 50 and last 85 characters, so a huge echoed value stays readable."""
    if len(message) > 50 + 3 + 85:
        message = f"{message[:50]}...{message[-85:]}"
    return ApiError(
        "malformed_payload",
        f"The `{kind}` payload provided is malformed. `Couldn't serialize document value: {message}`.",
    )


def _parse_json(body: bytes) -> list[Document]:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise _malformed("json", _failure_detail(body, error)) from None
    if too_deep(body, value):
        raise _malformed("json", depth_error(body))
    if type(value) is dict:
        return [value]
    if type(value) is list and set(map(type, value)) <= {dict}:
        return value
    raise _malformed("json", _DATA_SHAPE)


def _parse_ndjson(body: bytes) -> list[Document]:
    lines = body.split(b"\n")
    try:
        documents = list(map(orjson.loads, filter(None, lines)))
    except orjson.JSONDecodeError:  # a malformed or whitespace-only line: redo it line by line
        return _parse_ndjson_lines(lines)
    if set(map(type, documents)) <= {dict}:
        if too_deep(body, documents, root_depth=0):
            raise _malformed("ndjson", _deep_line(lines))
        return documents
    raise _malformed("ndjson", _DATA_SHAPE)


def _parse_ndjson_lines(lines: list[bytes]) -> list[Document]:
    """The slow path: skips blank lines and reports the first bad line with its body-wide line number."""
    documents: list[Document] = []
    for number, line in enumerate(lines, start=1):
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            first = _FIRST_BYTE.search(line)
            if first is None:
                continue
            raise _malformed("ndjson", _line_failure(line, number, first.start(), error)) from None
        if type(value) is not dict:
            raise _malformed("ndjson", _DATA_SHAPE)
        if too_deep(line, value):
            raise _malformed("ndjson", _at_line(depth_error(line), number))
        documents.append(value)
    return documents


def _deep_line(lines: list[bytes]) -> str:
    """The message for the first line nested deeper than serde_json reads, positioned in the body."""
    for number, line in enumerate(lines, start=1):
        if line.strip() and too_deep(line, orjson.loads(line)):
            return _at_line(depth_error(line), number)
    raise AssertionError("no line is too deep")


def _at_line(detail: str, number: int) -> str:
    match = _POSITION.fullmatch(detail)
    return detail if match is None else f"{match[1]} at line {number} column {match[3]}"


def _line_failure(line: bytes, number: int, first: int, error: orjson.JSONDecodeError) -> str:
    """serde's message for one line, positioned in the whole body (serde reads NDJSON as one stream)."""
    if line[first] == ord("["):
        return _DATA_SHAPE  # an object is expected, and an array is refused before it is read
    return _at_line(_failure_detail(line, error), number)


def _failure_detail(data: bytes, error: orjson.JSONDecodeError) -> str:
    """serde_json's message for ``data``; a well-formed scalar followed by more text is a shape error,
    because the value is refused for its type before the rest of the input is read."""
    detail = serde_syntax_error(data) if len(data) <= _SCAN_LIMIT else None
    if detail is None:
        detail = f"{error.msg} at line {error.lineno} column {error.colno}"
    first = _FIRST_BYTE.search(data)
    if first is not None and data[first.start()] not in b"[{" and detail.startswith("trailing characters"):
        return _DATA_SHAPE
    return detail
