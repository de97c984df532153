"""``_vectors[.embedder[.userProvided|.documentTemplate|.regenerate|.fragments.<name>]] EXISTS``
(search.md §4.1, behind the ``multimodal`` feature), from the stored entries.

- ``_vectors EXISTS``: documents holding an embedding of any embedder; ``_vectors.e EXISTS``: of ``e``;
- ``.userProvided``: documents whose ``e`` embeddings are user-provided (``regenerate: false``, an
  opt-out with ``null`` included); ``.regenerate``: the others; ``.documentTemplate``: those generated
  from the document template (not user-provided, and ``e`` generates);
- ``.fragments.<name>``: nothing yet (an entry does not record which fragment each embedding came
  from, so this filter is not implemented).

The entries are read in the caller's transaction, so a delete by filter sees the batch's earlier
writes. One scan of the embedder's entries' headers: the filter is rare and experimental.
"""

from __future__ import annotations

from typing import Any

from pyroaring import BitMap

from shard.index.env import StoreEnv, Txn
from shard.vector.embedders import USER_PROVIDED
from shard.vector.storage import entry_header, iter_entries


def vector_filter(env: StoreEnv, txn: Txn, index_id: int, embedders: dict[str, Any], path: str) -> BitMap:
    """``path``: what follows ``_vectors`` (``""``, ``".e"``, ``".e.userProvided"``...)."""
    parts = path.split(".")[1:]
    names = [parts[0]] if parts else list(embedders)
    suffix = parts[1] if len(parts) > 1 else None
    found = BitMap()
    for name in names:
        if name not in embedders or suffix == "fragments":
            continue
        generated = embedders[name].get("source") != USER_PROVIDED
        for doc_id, value in iter_entries(env, txn, index_id, name):
            _, user, count = entry_header(value)
            if suffix is None:
                keep = count > 0
            elif suffix == "userProvided":
                keep = user
            elif suffix == "regenerate":
                keep = not user
            else:  # documentTemplate
                keep = not user and generated
            if keep:
                found.add(doc_id)
    return found
