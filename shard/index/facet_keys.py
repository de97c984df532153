"""Facet keys: ``index id (u32) + field id (u16) + kind (1 byte) + value``, each -> a doc-id bitmap.

One field's keys are contiguous and grouped by kind, so every filter operator is a single get or one
key-range scan: numbers are encoded so that byte order is numeric order, strings are UTF-8 (byte
order is code-point order). The kinds without a value (exists, null, empty) are one key per field.
Spelling keys (``normalised 0x00 original``) hold the documents of each original spelling of a
string, so a distribution can show one (search.md §1.7) and stays right as documents come and go.
Values reuse the postings codec (``encode_bitmap``): most facet values of a large index are rare.
"""

from __future__ import annotations

import struct

EXISTS = b"\x00"
NULL = b"\x01"
EMPTY = b"\x02"
NUMBER = b"\x03"
STRING = b"\x04"
SPELLING = b"\x05"

_FIELD = struct.Struct(">H")
_DOUBLE = struct.Struct(">d")
_U64 = struct.Struct(">Q")
_SIGN = 1 << 63
_ALL_BITS = (1 << 64) - 1
# LMDB keys are at most 511 bytes: longer strings keep their first bytes (whole characters), as the
# reference engine truncates its facet strings; equality on them then compares those bytes only.
MAX_STRING_BYTES = 448
# Room left for the original after the prefix (index 4 + field 2 + kind 1), a normalised value and 0x00.
_MAX_SPELLING_BYTES = 503


def field_prefix(index_prefix: bytes, field_id: int) -> bytes:
    return index_prefix + _FIELD.pack(field_id)


def encode_number(value: float) -> bytes:
    """Order-preserving: flip the sign bit of positives, every bit of negatives (-0.0 is 0.0)."""
    bits: int = _U64.unpack(_DOUBLE.pack(value + 0.0))[0]
    return _U64.pack(bits ^ _ALL_BITS if bits & _SIGN else bits | _SIGN)


def encode_string(value: str) -> bytes:
    raw = value.encode()
    if len(raw) <= MAX_STRING_BYTES:
        return raw
    return raw[:MAX_STRING_BYTES].decode(errors="ignore").encode()


def encode_spelling(normalised: str, original: str) -> bytes:
    """``normalised 0x00 original``, the original cut (at a character) to fit the key limit."""
    head = encode_string(normalised) + b"\x00"
    raw = original.encode()[: _MAX_SPELLING_BYTES - len(head)]
    return head + raw.decode(errors="ignore").encode()


def decode_number(encoded: bytes) -> float:
    """The inverse of ``encode_number``."""
    bits: int = _U64.unpack(encoded)[0]
    bits = bits ^ _SIGN if bits & _SIGN else bits ^ _ALL_BITS
    value: float = _DOUBLE.unpack(_U64.pack(bits))[0]
    return value
