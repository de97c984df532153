"""Checking stored documents before a settings change starts using their ``_geo`` or ``_geojson``.

Documents are validated at indexing only while the index uses those fields, so stored ones may hold
anything. The scheduler asks every shard before it applies such a change (read-only, see
``scheduler/settings.py``) and fails the settings tasks with the earliest bad document's error, so that
settings and data stay as they were on every shard.
"""

from __future__ import annotations

from typing import Any

import orjson

from common.documents import DocumentError
from common.documents.geo import check_geo
from common.documents.geojson import check_geojson
from shard.index.blocks import iter_values
from shard.index.codec import DocumentCodec
from shard.index.env import StoreEnv, Txn
from shard.index.sequence import read_sequences


def first_invalid(
    env: StoreEnv,
    codec: DocumentCodec,
    txn: Txn,
    index_id: int,
    index_uid: str,
    request: dict[str, Any],
) -> dict[str, Any]:
    """``{}``, or ``{"error", "sequence"}`` for the first document in insertion order that fails."""
    primary_key = request.get("primaryKey")
    for doc_id, value in iter_values(txn, env.documents, codec, index_id):
        document = orjson.loads(value)
        document_id = document.get(primary_key) if primary_key is not None else None
        try:
            if request.get("geo"):
                check_geo(index_uid, document, document_id)
            if request.get("geojson"):
                check_geojson(index_uid, document, document_id)
        except DocumentError as error:
            return {"error": error.to_error(), "sequence": read_sequences(env, txn, index_id, [doc_id])[0]}
    return {}
