"""``_vectors`` as reads show it with ``retrieveVectors`` (search.md §1.6, core.md §3.3): the
document's own entries naming no embedder, then every embedder's stored embeddings."""

from __future__ import annotations

from typing import Any

import orjson

from shard.index.env import StoreEnv, Txn
from shard.vector.embedders import USER_PROVIDED
from shard.vector.storage import get_entry


def shown_vectors(
    env: StoreEnv,
    txn: Txn,
    index_id: int,
    embedders: dict[str, Any],
    doc_id: int | None,
    own: dict[str, Any],
) -> dict[str, Any]:
    """``own``: the stored document's ``_vectors``; ``doc_id`` None for a document not stored."""
    shown = {name: value for name, value in own.items() if name not in embedders}
    for name, config in embedders.items():
        entry = None if doc_id is None else get_entry(env, txn, index_id, name, doc_id)
        if entry is None:
            shown[name] = {"embeddings": [], "regenerate": config.get("source") != USER_PROVIDED}
        else:
            # float32 printed at its shortest (0.1, not 0.10000000149011612), as the reference shows it
            rows = orjson.loads(orjson.dumps(entry.embeddings, option=orjson.OPT_SERIALIZE_NUMPY))
            shown[name] = {"embeddings": rows, "regenerate": not entry.user_provided}
    return shown
