"""A composite embedder's two sides must produce the same vectors (search.md §6.11): documents are
embedded by its indexing embedder and queries by its search embedder, so any drift between them is a
silent loss of relevance. Checked once, when the setting is applied, on a few probe texts."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from shard.embedding.base import Embedder, EmbeddingError

MAX_DISTANCE: Final = 0.01
"""Largest cosine distance accepted between the two sides' vectors of one text: float rounding and
a provider's own noise pass, another model or pooling does not (MiniLM mean vs CLS pooling: 0.5)."""
PROBE_TEXTS: Final = (
    "a composite embedder test text",
    "The quick brown fox jumps over the lazy dog.",
    "Science fiction film about space travel, released in 1977",
)


def check_composite(indexing: Embedder, search: Embedder) -> None:
    """Raises ``EmbeddingError`` unless both sides give (nearly) the same vectors to the probe texts."""
    if indexing.dimensions != search.dimensions:
        raise EmbeddingError(
            f"composite embedder: the indexing embedder produces {indexing.dimensions} dimensions, "
            f"the search embedder {search.dimensions}"
        )
    documents = indexing.embed_documents(list(PROBE_TEXTS))
    queries = np.stack([search.embed_query(text) for text in PROBE_TEXTS])
    distances = 1 - np.sum(_unit(documents) * _unit(queries), axis=1)
    worst = int(np.argmax(distances))
    if distances[worst] > MAX_DISTANCE:
        raise EmbeddingError(
            "composite embedder: the search and indexing embedders do not produce the same vectors:\n"
            f"  - cosine distance {distances[worst]:.3f} (at most {MAX_DISTANCE}) for the text "
            f"`{PROBE_TEXTS[worst]}`"
        )


def _unit(vectors: np.ndarray) -> Any:
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
