"""Decoding of JSON request bodies, with serde_json's syntax-error messages.

orjson does the decoding. Only when it fails does a small scanner re-read the body the way serde_json does,
to report the same message and position (`EOF while parsing an object at line 1 column 22`); positions count
bytes, as serde_json does on a byte slice. The scanner is pure Python (up to ~1 s per MB), so bodies
above ``_SCAN_LIMIT`` keep orjson's own message rather than stall the event loop.
"""

from __future__ import annotations

import re
from typing import Any, Final, NoReturn

import orjson

from common.errors import malformed_json, missing_payload

_WHITESPACE = re.compile(rb"[ \t\n\r]*")
_STRING_RUN = re.compile(rb'[^"\\\x00-\x1f]*')
_DIGITS = re.compile(rb"[0-9]*")
_HEX4 = re.compile(rb"[0-9a-fA-F]{4}")
_SIMPLE_ESCAPES: Final = frozenset(b'"\\/bfnrt')
_IDENT_TAILS: Final = {ord("n"): b"ull", ord("t"): b"rue", ord("f"): b"alse"}
_SCAN_LIMIT: Final = 256 * 1024
_MAX_DEPTH: Final = 128  # serde_json's recursion limit: the 128th nested container is refused


def parse_json_body(raw: bytes) -> Any:
    """Decode a JSON body; an empty one is `missing_payload`, an invalid one `malformed_payload`."""
    if not raw:
        raise missing_payload("json")
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        detail = (serde_syntax_error(raw) if len(raw) <= _SCAN_LIMIT else None) or (
            f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        )
        raise malformed_json(detail) from None
    if too_deep(raw, value):
        raise malformed_json(depth_error(raw))
    return value


def too_deep(raw: bytes, value: Any, root_depth: int = 1) -> bool:
    """Whether ``value`` (decoded from ``raw``) nests more containers than serde_json accepts.

    orjson accepts 1,024 levels but cannot encode past 254, so a deeper body would fail later, wherever
    it is encoded again (a 500); serde_json refuses the 128th level. Fewer opening brackets than that in
    the whole body (most request bodies) need no walk; the walk visits containers' items only.
    ``root_depth`` 0: ``value`` is a list of values that were read separately (NDJSON lines).
    """
    if type(value) not in (dict, list) or raw.count(b"[") + raw.count(b"{") < _MAX_DEPTH:
        return False
    stack: list[tuple[Any, int]] = [(value, root_depth)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth >= _MAX_DEPTH:
            return True
        for child in node.values() if type(node) is dict else node:
            kind = type(child)
            if kind is dict or kind is list:
                push((child, depth + 1))
    return False


def depth_error(raw: bytes) -> str:
    """serde_json's message for a body ``too_deep`` refused (its position only when the body is small
    enough to scan)."""
    return (serde_syntax_error(raw) if len(raw) <= _SCAN_LIMIT else None) or (
        f"recursion limit exceeded: more than {_MAX_DEPTH - 1} nested arrays or objects"
    )


def serde_syntax_error(raw: bytes) -> str | None:
    """serde_json's message for the first syntax error in ``raw``, or None if it finds none."""
    scanner = _Scanner(raw)
    try:
        scanner.document()
    except _SyntaxError as error:
        line_start = raw.rfind(b"\n", 0, error.index) + 1
        line = raw.count(b"\n", 0, error.index) + 1
        return f"{error.reason} at line {line} column {error.index - line_start}"
    return None


class _SyntaxError(Exception):
    def __init__(self, reason: str, index: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.index = index


class _Scanner:
    """Mirror of serde_json's parser control flow, reduced to recognising the grammar."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.depth = _MAX_DEPTH

    def fail(self, reason: str) -> NoReturn:
        """serde's `error`: the position is the last consumed byte."""
        raise _SyntaxError(reason, self.pos)

    def fail_peek(self, reason: str) -> NoReturn:
        """serde's `peek_error`: the position is the byte being looked at."""
        raise _SyntaxError(reason, min(len(self.data), self.pos + 1))

    def peek(self) -> int | None:
        return self.data[self.pos] if self.pos < len(self.data) else None

    def next_byte(self) -> int | None:
        """Consume and return the next byte, if any (serde's `next_char`)."""
        byte = self.peek()
        if byte is not None:
            self.pos += 1
        return byte

    def skip(self, pattern: re.Pattern[bytes]) -> None:
        """Advance over the run ``pattern`` matches (every pattern here accepts an empty run)."""
        match = pattern.match(self.data, self.pos)
        if match:
            self.pos = match.end()

    def skip_whitespace(self) -> int | None:
        self.skip(_WHITESPACE)
        return self.peek()

    def document(self) -> None:
        self.value()
        if self.skip_whitespace() is not None:
            self.fail_peek("trailing characters")

    def value(self) -> None:
        byte = self.skip_whitespace()
        if byte is None:
            self.fail_peek("EOF while parsing a value")
        if byte in b"ntf":
            self.pos += 1
            self.ident(_IDENT_TAILS[byte])
        elif byte == ord("-"):
            self.pos += 1
            self.number()
        elif byte in b"0123456789":
            self.number()
        elif byte == ord('"'):
            self.pos += 1
            self.string()
        elif byte in b"[{":
            self.depth -= 1
            if self.depth == 0:
                self.fail_peek("recursion limit exceeded")
            self.pos += 1
            if byte == ord("["):
                self.array()
            else:
                self.object()
            self.depth += 1
        else:
            self.fail_peek("expected value")

    def ident(self, rest: bytes) -> None:
        for expected in rest:
            byte = self.peek()
            if byte is None:
                self.fail("EOF while parsing a value")
            self.pos += 1
            if byte != expected:
                self.fail("expected ident")

    def number(self) -> None:
        start = self.pos
        first = self.next_byte()
        if first is None:
            self.fail("EOF while parsing a value")
        if first == ord("0"):
            if (self.peek() or 0) in b"0123456789":
                self.fail_peek("invalid number")
        elif first in b"123456789":
            self.skip(_DIGITS)
        else:
            self.fail("invalid number")
        if self.peek() == ord("."):
            self.pos += 1
            if (self.peek() or 0) not in b"0123456789":
                self.fail_peek("invalid number" if self.peek() is not None else "EOF while parsing a value")
            self.skip(_DIGITS)
        if self.peek() in (ord("e"), ord("E")):
            self.pos += 1
            if self.peek() in (ord("+"), ord("-")):
                self.pos += 1
            exponent_digit = self.next_byte()
            if exponent_digit is None:
                self.fail("EOF while parsing a value")
            if exponent_digit not in b"0123456789":
                self.fail("invalid number")
            self.skip(_DIGITS)
        if float(self.data[start : self.pos]) in (float("inf"), float("-inf")):
            self.fail("number out of range")

    def string(self) -> None:
        start = self.pos
        while True:
            self.skip(_STRING_RUN)
            byte = self.peek()
            if byte is None:
                self.fail("EOF while parsing a string")
            self.pos += 1
            if byte == ord('"'):
                try:
                    self.data[start : self.pos - 1].decode()
                except UnicodeDecodeError:
                    self.fail("invalid unicode code point")
                return
            if byte != ord("\\"):
                self.fail("control character (\\u0000-\\u001F) found while parsing a string")
            self.escape()

    def escape(self) -> None:
        byte = self.next_byte()
        if byte is None:
            self.fail("EOF while parsing a string")
        if byte in _SIMPLE_ESCAPES:
            return
        if byte != ord("u"):
            self.fail("invalid escape")
        unit = self.hex4()
        if 0xDC00 <= unit <= 0xDFFF:
            self.fail("lone leading surrogate in hex escape")
        if 0xD800 <= unit <= 0xDBFF:
            for expected in b"\\u":
                byte = self.next_byte()
                if byte is None:
                    self.fail("EOF while parsing a string")
                if byte != expected:
                    self.fail("unexpected end of hex escape")
            if not 0xDC00 <= self.hex4() <= 0xDFFF:
                self.fail("lone leading surrogate in hex escape")

    def hex4(self) -> int:
        if self.pos + 4 > len(self.data):
            self.pos = len(self.data)
            self.fail("EOF while parsing a string")
        self.pos += 4
        if not _HEX4.fullmatch(self.data, self.pos - 4, self.pos):
            self.fail("invalid escape")
        return int(self.data[self.pos - 4 : self.pos], 16)

    def array(self) -> None:
        first = True
        while True:
            byte = self.skip_whitespace()
            if byte == ord("]"):
                self.pos += 1
                return
            if byte == ord(",") and not first:
                self.pos += 1
                byte = self.skip_whitespace()
                if byte == ord("]"):
                    self.fail_peek("trailing comma")
                if byte is None:
                    self.fail_peek("EOF while parsing a value")
            elif byte is None:
                self.fail_peek("EOF while parsing a list")
            elif first:
                first = False
            else:
                self.fail_peek("expected `,` or `]`")
            self.value()

    def object(self) -> None:
        first = True
        while True:
            byte = self.skip_whitespace()
            if byte == ord("}"):
                self.pos += 1
                return
            if byte == ord(",") and not first:
                self.pos += 1
                byte = self.skip_whitespace()
            elif byte is None:
                self.fail_peek("EOF while parsing an object")
            elif first:
                first = False
            else:
                self.fail_peek("expected `,` or `}`")
            if byte == ord("}"):
                self.fail_peek("trailing comma")
            if byte is None:
                self.fail_peek("EOF while parsing a value")
            if byte != ord('"'):
                self.fail_peek("key must be a string")
            self.pos += 1
            self.string()
            byte = self.skip_whitespace()
            if byte is None:
                self.fail_peek("EOF while parsing an object")
            if byte != ord(":"):
                self.fail_peek("expected `:`")
            self.pos += 1
            self.value()
