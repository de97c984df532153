"""The body of ``GET /tasks/{uid}/documents``: an enqueued addition's documents as the reference shows them.

Its answer depends on the payload's format (compared byte for byte, ``application/x-ndjson`` in every
case): an NDJSON body comes back exactly as it was sent; a JSON body (an array, or one object) as its
objects one after the other with nothing between them, each rewritten with its keys decoded and
re-encoded and no space around them, but every value exactly as written (``1.50``, ``1e3``,
``"caf\\u00e9"``, inner spaces all kept); a CSV body as the JSON objects it was read as, likewise
concatenated. A duplicated key keeps its first place and its last value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import orjson

_VALUES = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def task_documents(payload: str, kind: str | None) -> bytes:
    """``payload``: the stored payload (validated when the task was registered); ``kind``: the task's
    ``payloadFormat``, None for a stored JSON array (CSV, and tasks stored before formats were kept)."""
    if kind == "ndjson":
        return payload.encode()
    if kind == "json":
        return "".join(_rewritten(fields) for fields in _objects(payload)).encode()
    return b"".join(orjson.dumps(document) for document in orjson.loads(payload))


def _rewritten(fields: dict[str, str]) -> str:
    return "{" + ",".join(f"{orjson.dumps(key).decode()}:{raw}" for key, raw in fields.items()) + "}"


def _objects(text: str) -> Iterator[dict[str, str]]:
    """Each top-level object of a JSON body: its keys, decoded, to their values' text."""
    at = _skip(text, 0)
    if text[at] == "{":
        yield _object(text, at)[0]
        return
    at = _skip(text, at + 1)
    while text[at] != "]":
        fields, at = _object(text, at)
        yield fields
        at = _skip(text, at)
        if text[at] == ",":
            at = _skip(text, at + 1)


def _object(text: str, at: int) -> tuple[dict[str, str], int]:
    """The object opening at ``at`` and the index after it."""
    fields: dict[str, str] = {}
    at = _skip(text, at + 1)
    while text[at] != "}":
        key, at = _VALUES.raw_decode(text, at)
        at = _skip(text, _skip(text, at) + 1)  # past the colon
        end = _VALUES.raw_decode(text, at)[1]
        fields[key] = text[at:end]
        at = _skip(text, end)
        if text[at] == ",":
            at = _skip(text, at + 1)
    return fields, at + 1


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    assert match is not None  # the pattern matches the empty string
    return match.end()
