"""Vectors stored on the shard, and the nearest-neighbour reads searches make on them.

Read seam (for ``shard/query``):

- ``nearest(vectors, index_id, embedder, query, k, allowed)`` -> ``[(doc_id, similarity)]``: the ``k``
  documents of ``allowed`` closest to ``query`` (float32, the embedder's dimensions), each by its best
  embedding, best first, ties by doc id. Similarity is the cosine (in [-1, 1]; for ``binaryQuantized``
  embedders ``1 - 2 * hamming / d``), before any ``distribution`` shift. ``vectors`` is
  ``ShardStore.vectors``; documents outside ``allowed`` are never returned, so pass the search's live
  (and filtered) documents.
- ``document_vectors(env, txn, index_id, embedder, doc_id)`` -> the document's embeddings, shape
  ``(m, d)``, as stored (not normalised; sign bits as 1 and 0), or None when it has none (for /similar).
- ``embedded(env, txn, index_id, embedder)`` -> the documents holding at least one embedding.
- ``embedder_stats(env, txn, index_id)`` -> ``(numberOfEmbeddings, numberOfEmbeddedDocuments)``.

LMDB (``storage.py``) is authoritative; the in-memory spaces (``space.py``, ``registry.py``) follow it
after every commit and are checkpointed so a restart loads rather than rebuilds them.
"""

from __future__ import annotations

import numpy as np
from pyroaring import BitMap

from shard.index.env import StoreEnv, Txn
from shard.vector.registry import VectorStore
from shard.vector.storage import get_entry, load_space, spaces

__all__ = ["VectorStore", "document_vectors", "embedded", "embedder_stats", "nearest"]


def nearest(
    vectors: VectorStore, index_id: int, embedder: str, query: np.ndarray, k: int, allowed: BitMap
) -> list[tuple[int, float]]:
    space = vectors.space(index_id, embedder)
    if space is None:
        return []
    with space.lock.reading():
        return space.nearest(query, k, allowed)


def document_vectors(env: StoreEnv, txn: Txn, index_id: int, embedder: str, doc_id: int) -> np.ndarray | None:
    entry = get_entry(env, txn, index_id, embedder, doc_id)
    if entry is None or entry.count == 0:
        return None
    return entry.embeddings


def embedded(env: StoreEnv, txn: Txn, index_id: int, embedder: str) -> BitMap:
    record = load_space(env, txn, index_id, embedder)
    return BitMap() if record is None else record.documents


def embedder_stats(env: StoreEnv, txn: Txn, index_id: int) -> tuple[int, int]:
    """Embeddings and embedded documents over the index's embedders (a document counts once)."""
    embeddings, documents = 0, BitMap()
    for _, _, record in spaces(env, txn, index_id):
        embeddings += record.embeddings
        documents |= record.documents
    return embeddings, len(documents)
