"""The embedders as a batch uses them (``shard/embedding``), failures as the task's error."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from common.errors import ApiError
from shard.embedding import EmbeddingError, embedder_for, regeneration_key

__all__ = ["USER_PROVIDED", "ShardEmbedding", "regeneration_key"]

USER_PROVIDED = "userProvided"


CHUNK_SECONDS = 0.5
"""About how long one call to an embedder may take: between two calls the batch checks whether it was
canceled, so a cancelation does not wait for every text of a slow provider. The number of texts per
call adapts to the provider's pace (from 8 to 1,024, providers batching 64 at most per request)."""
_SMALLEST, _LARGEST = 8, 1024


class ShardEmbedding:
    """``ingest.Embedding`` over ``shard.embedding.embedder_for``; ``check_abort`` raises when the
    batch was canceled (``WriteContext.check_abort``)."""

    def __init__(self, check_abort: Callable[[], None]) -> None:
        self.check_abort = check_abort

    def dimensions(self, config: dict[str, Any]) -> int:
        if config.get("source") == USER_PROVIDED:
            return int(config["dimensions"])
        try:
            return embedder_for(config, side="indexing").dimensions
        except EmbeddingError as error:
            raise ApiError("vector_embedding_error", error.message) from None

    def embed(self, index_uid: str, name: str, config: dict[str, Any], texts: list[str]) -> np.ndarray:
        try:
            embedder = embedder_for(config, side="indexing")
            parts, start, size = [], 0, _SMALLEST
            while start < len(texts):
                self.check_abort()
                began = time.monotonic()
                parts.append(embedder.embed_documents(texts[start : start + size]))
                start += size
                pace = CHUNK_SECONDS / max(time.monotonic() - began, 1e-3)
                size = int(min(_LARGEST, max(_SMALLEST, size * min(pace, 4.0))))
            return np.concatenate(parts) if parts else np.empty((0, embedder.dimensions), np.float32)
        except EmbeddingError as error:
            raise ApiError(
                "vector_embedding_error",
                f"Index `{index_uid}`: While embedding documents for embedder `{name}`: {error.message}",
            ) from None
