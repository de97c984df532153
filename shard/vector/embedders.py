"""The embedders as a batch uses them (``shard/embedding``), failures as the task's error."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from common.errors import ApiError
from shard.embedding import EmbeddingError, embedder_for, regeneration_key
from shard.vector.prepared import PreparedEmbeddings, config_key

__all__ = ["LOCAL", "USER_PROVIDED", "ShardEmbedding", "regeneration_key"]

USER_PROVIDED = "userProvided"
LOCAL = "huggingFace"
"""The source run in the shard's process: loading it needs no network, so settings changes do."""


CHUNK_SECONDS = 0.5
"""About how long one call to an embedder may take: between two calls the batch checks whether it was
canceled, so a cancelation does not wait for every text of a slow provider. The number of texts per
call adapts to the provider's pace (from 8 to 1,024, providers batching 64 at most per request)."""
_SMALLEST, _LARGEST = 8, 1024


class ShardEmbedding:
    """``ingest.Embedding`` over ``shard.embedding.embedder_for``; ``check_abort`` raises when the
    batch was canceled (``WriteContext.check_abort``). What the embedders answer is served from and
    recorded in ``prepared``, the batch's kept answers (``prepared.py``)."""

    def __init__(self, check_abort: Callable[[], None], prepared: PreparedEmbeddings | None = None) -> None:
        self.check_abort = check_abort
        self.prepared = prepared

    def dimensions(self, config: dict[str, Any]) -> int:
        if config.get("source") == USER_PROVIDED:
            return int(config["dimensions"])
        key = config_key(config)
        if self.prepared is not None and key in self.prepared.dimensions:
            return self.prepared.dimensions[key]
        try:
            dimensions = embedder_for(config, side="indexing").dimensions
        except EmbeddingError as error:
            raise ApiError("vector_embedding_error", error.message) from None
        if self.prepared is not None:
            self.prepared.record_dimensions(key, dimensions)
        return dimensions

    def embed(self, index_uid: str, name: str, config: dict[str, Any], texts: list[str]) -> np.ndarray:
        """float32 ``(len(texts), d)``: the texts the batch embedded before are not sent again."""
        prepared = self.prepared
        if prepared is None or not texts:
            return self._embed(index_uid, name, config, texts)
        key = config_key(config)
        missing = [text for text in dict.fromkeys(texts) if (key, text) not in prepared.vectors]
        if missing:
            prepared.record(key, missing, self._embed(index_uid, name, config, missing))
        return np.stack([prepared.vectors[(key, text)] for text in texts])

    def _embed(self, index_uid: str, name: str, config: dict[str, Any], texts: list[str]) -> np.ndarray:
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
            # As the reference words a failed document task: `runtime error: could not reach ...`
            raise ApiError(
                "vector_embedding_error",
                f"Index `{index_uid}`: While embedding documents for embedder `{name}`: {error.fault} error:"
                f" {error.detail}",
            ) from None
