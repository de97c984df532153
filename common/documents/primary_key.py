"""Primary-key inference and document-id extraction (core.md §3.3).

These errors belong to a task, not to an HTTP response: a bad id fails only the task that carried the payload,
so they are raised as ``DocumentError`` and stored in ``task.error`` by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import orjson

from common.errors import ApiError

_ID_TEXT: Final = re.compile(r"[A-Za-z0-9_-]{1,511}")  # ASCII only, so 511 characters == 511 bytes
_MISSING: Final = object()


class DocumentError(Exception):
    """A payload-level failure (missing or invalid id, primary-key inference) reported in the task."""

    def __init__(self, code: str, message: str) -> None:
        ApiError(code, message)  # fail fast on a code the error table does not know
        super().__init__(message)
        self.code = code
        self.message = message

    def to_error(self) -> dict[str, str]:
        """The `{message, code, type, link}` object stored in a failed task."""
        return ApiError(self.code, self.message).to_dict()

    def __repr__(self) -> str:
        return f"DocumentError({self.code!r}, {self.message!r})"


def _compact_json(value: object) -> str:
    """serde_json's compact rendering, used verbatim in the messages (orjson keeps key order)."""
    return orjson.dumps(value).decode()


def invalid_document_id_error(value: object) -> DocumentError:
    """Also the text the read routes embed for a bad `ids` entry (``In `.ids[1]`: …``)."""
    return DocumentError(
        "invalid_document_id",
        f"Document identifier `{_compact_json(value)}` is invalid. A document identifier can be of type"
        " integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and"
        " underscores (_), and can not be more than 511 bytes.",
    )


def is_valid_document_id(text: str) -> bool:
    """Whether ``text`` is a well-formed external id (the `{id}` path parameter, `ids` entries)."""
    return _ID_TEXT.fullmatch(text) is not None


def infer_primary_key(first_document: Mapping[str, Any] | None) -> str:
    """The single top-level field of the first document whose lower-cased name ends with `id`."""
    candidates = sorted(name for name in first_document or () if name.lower().endswith("id"))
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise DocumentError(
            "index_primary_key_no_candidate_found",
            "The primary key inference failed as the engine did not find any field ending with `id` in its"
            " name. Please specify the primary key manually using the `primaryKey` query parameter.",
        )
    # Only the first two candidates are named, whatever their number.
    raise DocumentError(
        "index_primary_key_multiple_candidates_found",
        f"The primary key inference failed as the engine found {len(candidates)} fields ending with `id` in"
        f" their names: '{candidates[0]}' and '{candidates[1]}'. Please specify the primary key manually"
        " using the `primaryKey` query parameter.",
    )


def extract_document_id(document: Mapping[str, Any], primary_key: str) -> str:
    """The canonical external id: an integer's decimal text, or a valid id string as is."""
    if "." in primary_key:
        matches: list[object] = []
        _collect_nested(document, primary_key, "", matches)
        if len(matches) > 1:
            raise DocumentError(
                "invalid_document_id",
                f"Document have too many matching `{primary_key}` attribute: `{_compact_json(document)}`.",
            )
        value = matches[0] if matches else _MISSING
    else:
        value = document.get(primary_key, _MISSING)
    if value is _MISSING:
        raise DocumentError(
            "missing_document_id",
            f"Document doesn't have a `{primary_key}` attribute: `{_compact_json(document)}`.",
        )
    if isinstance(value, int) and not isinstance(value, bool):  # a bool is not an id
        return str(value)
    if isinstance(value, str) and _ID_TEXT.fullmatch(value):
        return value
    raise invalid_document_id_error(value)


def _collect_nested(obj: Mapping[str, Any], path: str, prefix: str, out: list[object]) -> None:
    """Every value whose dotted name is ``path``: `{"a.b": 1}` and `{"a": {"b": 1}}` both match `a.b`."""
    for key, value in obj.items():
        name = f"{prefix}.{key}" if prefix else key
        if name == path:
            out.append(value)
        elif isinstance(value, dict) and path.startswith(name + "."):
            _collect_nested(value, path, name, out)
