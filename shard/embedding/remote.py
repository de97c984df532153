"""What the HTTP sources share: texts cut into requests, each answer checked, dimensions probed."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from shard.embedding.base import Embedder, EmbeddingError, as_matrix


class RemoteEmbedder(Embedder):
    url: str
    batch_size: int
    """Texts per request: 1 when the API or template takes a single text."""
    probe = "test"
    """What is embedded to learn the dimensions when they are not configured."""

    def _set_dimensions(self, configured: int | None) -> None:
        """``dimensions`` as configured, else asked of the server once, with one text."""
        if configured:
            self.dimensions = int(configured)
            return
        try:
            self.dimensions = as_matrix(self._request([self.probe]), 1, None, self.url).shape[1]
        except EmbeddingError as error:
            raise EmbeddingError(
                "could not determine model dimensions:\n"
                f"  - test embedding failed with {error.fault} error: {error.detail}",
                error.fault,
            ) from None

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        chunks = [texts[start : start + self.batch_size] for start in range(0, len(texts), self.batch_size)]
        parts = [as_matrix(self._request(chunk), len(chunk), self.dimensions, self.url) for chunk in chunks]
        return np.concatenate(parts) if parts else np.empty((0, self.dimensions), dtype=np.float32)

    @abstractmethod
    def _request(self, texts: Sequence[str]) -> Any:
        """One request's embeddings (a list of arrays), in the order of ``texts``."""
