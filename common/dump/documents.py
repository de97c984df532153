"""Documents in a dump: ``_vectors`` as the reference writes them, ``{embedder: {embeddings, regenerate}}``.

Documents are read with ``retrieveVectors``: shards that keep embeddings apart from documents put
every embedder's entry back as ``{embeddings, regenerate}`` (generated ones included); shards that
keep ``_vectors`` in the document give it as it was sent (normalised by
``common/documents/vectors.py``: a bare array or array of arrays, or ``{regenerate, embeddings}``).
In a dump every entry is explicit, embeddings always an array of arrays; bare arrays are
user-provided (``regenerate: false``).
"""

from __future__ import annotations

from typing import Any

from common.documents.projection import VECTORS


def _as_matrix(embeddings: Any) -> list[Any]:
    if not isinstance(embeddings, list) or not embeddings:
        return []
    return embeddings if isinstance(embeddings[0], list) else [embeddings]


def dumped_document(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its ``_vectors`` entries in the dump's explicit form (changed in place)."""
    vectors = document.get(VECTORS)
    if not isinstance(vectors, dict):
        return document
    for name, value in vectors.items():
        if isinstance(value, dict):
            vectors[name] = {
                "embeddings": _as_matrix(value.get("embeddings")),
                "regenerate": bool(value.get("regenerate", False)),
            }
        else:
            vectors[name] = {"embeddings": _as_matrix(value), "regenerate": False}
    return document
