"""CSV document payloads: typed headers, cell conversion and the Rust `csv` crate's error wording (§1.5).

The stdlib reader does the tokenising; this module reproduces what the reference engine does around it:
header `name:type` typing, empty cell -> null, i64-then-f64 numbers, trimmed booleans, and error messages
that name the record, line and byte offset the way its CSV reader does.
"""

from __future__ import annotations

import csv
import io
import math
import re
import sys
import unicodedata
from collections.abc import Callable, Iterator
from typing import Final

from common.errors import ApiError

# Python refuses fields over 128 KiB by default; the reference reader has no such limit. Process-global, and
# only ever raised.
csv.field_size_limit(sys.maxsize)

_I64_MIN: Final = -(2**63)
_I64_MAX: Final = 2**63 - 1
# Rust's `str::trim` removes White_Space characters; `str.strip()` would also remove U+001C..U+001F.
_RUST_WHITESPACE: Final = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(
    map(chr, range(0x2000, 0x200B))
)
_DEBUG_ESCAPES: Final = {"\t": "\\t", "\r": "\\r", "\n": "\\n", "\\": "\\\\", '"': '\\"', "\0": "\\0"}
_UNPRINTABLE: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs", "Mn", "Me"})
_UTF8_INVALID: Final = re.compile("[\udc80-\udcff]")  # bytes that `surrogateescape` could not decode

Cell = str | int | float | bool | None
Converter = Callable[[str, int], Cell]  # (cell, 1-based data record)


def malformed_csv(detail: str) -> ApiError:
    return ApiError("malformed_payload", f"The `csv` payload provided is malformed: `{detail}`.")


def parse_csv(body: bytes, delimiter: str) -> list[dict[str, Cell]]:
    """Documents of a CSV payload, fields in header order; ``delimiter`` is one ASCII character."""
    try:
        text, lossy = body.decode(), False
    except UnicodeDecodeError:
        text, lossy = body.decode(errors="surrogateescape"), True
    source = _Source(text, delimiter)
    rows: Iterator[list[str]] = csv.reader(io.StringIO(source.text, newline=""), delimiter=delimiter)
    if lossy:
        rows = _utf8_checked(rows, source)
    header = next(filter(None, rows), None)  # blank lines are not records
    if header is None:
        return []
    names, converters = _parse_header(header)
    width = len(names)
    documents: list[dict[str, Cell]] = []
    record = 0  # the header is record 0
    for row in rows:
        if len(row) != width:
            if not row:
                continue
            line, byte = source.position(record + 1)
            raise malformed_csv(
                f"CSV error: record {record + 1} (line: {line}, byte: {byte}): found record with {len(row)}"
                f" fields, but the previous record has {width} fields"
            )
        record += 1
        values: list[Cell] = [cell or None for cell in row]
        for index, convert in converters:
            values[index] = convert(row[index], record)
        documents.append(dict(zip(names, values, strict=True)))
    return documents


class _Source:
    """The decoded payload, and where its records start (only computed for an error message)."""

    def __init__(self, text: str, delimiter: str) -> None:
        self.bom = 3 if text.startswith("\ufeff") else 0  # the reader skips a BOM; byte offsets count it
        self.text = text[1:] if self.bom else text
        self.delimiter = delimiter

    def position(self, record: int) -> tuple[int, int]:
        """1-based line and byte offset where record ``record`` (the header is 0) starts."""
        lines = _Lines(self.text)
        rows = csv.reader(lines, delimiter=self.delimiter)
        seen, start = -1, 0
        while seen < record:
            start = lines.offset
            seen += bool(next(rows))
        byte = len(self.text[:start].encode(errors="surrogateescape")) + self.bom
        return self.text.count("\n", 0, start) + 1, byte


class _Lines:
    """Feeds a reader line by line while counting the characters consumed."""

    def __init__(self, text: str) -> None:
        self.offset = 0
        self._lines = iter(io.StringIO(text, newline=""))

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        self.offset += len(line)
        return line


def _parse_header(row: list[str]) -> tuple[list[str], list[tuple[int, Converter]]]:
    """Field names and the converters of typed columns; `a:b:number` is `a:b`, `when:date` stays whole."""
    names: list[str] = []
    converters: list[tuple[int, Converter]] = []
    for index, header in enumerate(row):
        name, colon, suffix = header.rpartition(":")
        if not colon or suffix not in ("string", "number", "boolean"):
            names.append(header)
            continue
        names.append(name)
        if suffix != "string":
            converters.append((index, _to_number if suffix == "number" else _to_boolean))
    return names, converters


def _to_number(cell: str, record: int) -> int | float | None:
    text = cell.strip(_RUST_WHITESPACE)
    if not text:
        return None
    # Python's int() and float() also take `_` separators and non-ASCII digits, which Rust refuses.
    if text.isascii() and "_" not in text:
        if (text[1:] if text[0] in "+-" else text).isdigit():
            integer = int(text)
            if _I64_MIN <= integer <= _I64_MAX:
                return integer
        try:
            number = float(text)
        except ValueError:
            pass
        else:
            return number if math.isfinite(number) else None  # serde_json writes NaN and infinities as null
    raise malformed_csv(f"Error parsing number {_rust_debug(cell)} at line {record}: invalid float literal")


def _to_boolean(cell: str, record: int) -> bool | None:
    text = cell.strip(_RUST_WHITESPACE)
    if not text:
        return None
    if text in ("true", "false"):
        return text == "true"
    raise malformed_csv(
        f"Error parsing boolean {_rust_debug(cell)} at line {record}:"
        " provided string was not `true` or `false`"
    )


def _rust_debug(text: str) -> str:
    """Rust's `{:?}` of a string, as the reference engine quotes the offending cell."""
    escaped = []
    for char in text:
        if char in _DEBUG_ESCAPES:
            escaped.append(_DEBUG_ESCAPES[char])
        elif char != " " and unicodedata.category(char) in _UNPRINTABLE:
            escaped.append(f"\\u{{{ord(char):x}}}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def _utf8_checked(rows: Iterator[list[str]], source: _Source) -> Iterator[list[str]]:
    """Rows of a payload that is not valid UTF-8, up to the first record holding undecodable bytes."""
    record = 0
    for row in rows:
        for field, cell in enumerate(row):
            bad = _UTF8_INVALID.search(cell)
            if bad:
                line, byte = source.position(record)
                valid_up_to = len(cell[: bad.start()].encode())
                raise malformed_csv(
                    f"CSV parse error: record {record} (line {line}, field: {field}, byte: {byte}):"
                    f" invalid utf-8: invalid UTF-8 in field {field} near byte index {valid_up_to}"
                )
        record += bool(row)
        yield row
