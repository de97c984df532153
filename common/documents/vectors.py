"""A document's ``_vectors`` field, checked and normalised when its batch is planned (search.md §6.11).

``_vectors`` maps embedder names to an embedding (array), several (array of arrays) or an explicit
``{"regenerate": bool, "embeddings": ...}``. The reference checks only this shape when no embedder
uses the name (the numbers are checked by the embedder that reads them), stores ``null`` as ``[]``
and an explicit object as ``{regenerate, embeddings}``. A bad value fails its task with
``invalid_vectors_type`` and the reference's messages; a ``_vectors`` that is not an object fails too
(the reference answers ``internal`` there; the contract's code for bad vectors is kept instead).
"""

from __future__ import annotations

from typing import Any

import orjson

from common.documents.primary_key import DocumentError
from common.documents.projection import VECTORS

_CODE = "invalid_vectors_type"
_EXPLICIT = ("regenerate", "embeddings")


def normalize_vectors(index_uid: str, document: dict[str, Any], external_id: str) -> None:
    """Checks ``document[_vectors]`` and rewrites it in place in the stored form; raises
    ``DocumentError`` for the first bad entry."""
    vectors = document.get(VECTORS, _ABSENT)
    if vectors is _ABSENT:
        return
    prefix = f"Index `{index_uid}`: Bad embedder configuration in the document with id: `{external_id}`. "
    if not isinstance(vectors, dict):
        raise DocumentError(
            _CODE,
            f"{prefix}Expected `._vectors` to be an object of embedder names, but got {_described(vectors)}",
        )
    for name, value in vectors.items():
        path = f"._vectors.{name}"
        if value is None:
            vectors[name] = []
        elif isinstance(value, dict):
            vectors[name] = _explicit(prefix, path, value)
        elif not isinstance(value, list):
            raise DocumentError(
                _CODE,
                f"{prefix}Expected `{path}` to be an array of floats, an array of arrays of floats, or an"
                f" object with at least the field `regenerate`, but got {_described(value)}",
            )


def _explicit(prefix: str, path: str, value: dict[str, Any]) -> dict[str, Any]:
    unknown = [key for key in value if key not in _EXPLICIT]
    if unknown:
        raise DocumentError(
            _CODE,
            f"{prefix}Could not parse `{path}`: unknown field `{unknown[0]}`, expected `regenerate` or"
            " `embeddings`",
        )
    if "regenerate" not in value:
        raise DocumentError(
            _CODE,
            f"{prefix}Missing field `{path}.regenerate`\n  - note: `{path}` must be an array of floats, an"
            " array of arrays of floats, or an object with field `regenerate`",
        )
    regenerate = value["regenerate"]
    if not isinstance(regenerate, bool):
        raise DocumentError(
            _CODE,
            f"{prefix}Could not parse `{path}.regenerate`: invalid type: {_serde_kind(regenerate)},"
            " expected a boolean",
        )
    return {"regenerate": regenerate, "embeddings": value.get("embeddings")}


_NAMES: dict[str, tuple[str, str]] = {
    "null": ("null", "null"),
    "boolean": ("the boolean `{json}`", "boolean `{json}`"),
    "integer": ("the integer `{json}`", "integer `{json}`"),
    "float": ("the number `{json}`", "floating point `{json}`"),
    "string": ("the string `{raw}`", "string {json}"),
    "array": ("an array", "sequence"),
    "object": ("an object", "map"),
}
"""Per JSON kind: how the reference's own messages name a value, and how its JSON deserializer does."""


def _described(value: Any) -> str:
    """``the integer `5```, as the reference's messages name an unexpected value."""
    return _NAMES[_kind(value)][0].format(raw=value, json=orjson.dumps(value).decode())


def _serde_kind(value: Any) -> str:
    """``string "yes"``: how a JSON deserializer names a value of the wrong type."""
    return _NAMES[_kind(value)][1].format(raw=value, json=orjson.dumps(value).decode())


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


_ABSENT: Any = object()
