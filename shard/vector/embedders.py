"""The embedders as a batch uses them (``shard/embedding``), failures as the task's error."""

from __future__ import annotations

from typing import Any

import numpy as np

from common.errors import ApiError
from shard.embedding import EmbeddingError, embedder_for, regeneration_key

__all__ = ["USER_PROVIDED", "ShardEmbedding", "regeneration_key"]

USER_PROVIDED = "userProvided"


class ShardEmbedding:
    """``ingest.Embedding`` over ``shard.embedding.embedder_for``."""

    def dimensions(self, config: dict[str, Any]) -> int:
        if config.get("source") == USER_PROVIDED:
            return int(config["dimensions"])
        try:
            return embedder_for(config, side="indexing").dimensions
        except EmbeddingError as error:
            raise ApiError("vector_embedding_error", error.message) from None

    def embed(self, index_uid: str, name: str, config: dict[str, Any], texts: list[str]) -> np.ndarray:
        try:
            return embedder_for(config, side="indexing").embed_documents(texts)
        except EmbeddingError as error:
            raise ApiError(
                "vector_embedding_error",
                f"Index `{index_uid}`: While embedding documents for embedder `{name}`: {error.message}",
            ) from None
