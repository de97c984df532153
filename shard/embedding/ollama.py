"""The ``ollama`` source: ``/api/embed`` takes a list of texts per request, the older
``/api/embeddings`` one ``prompt`` per request."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from shard.embedding.base import Embedder, EmbeddingError, as_matrix
from shard.embedding.http import post_json

DEFAULT_URL: Final = "http://localhost:11434/api/embeddings"
BATCH_SIZE: Final = 64


class OllamaEmbedder(Embedder):
    def __init__(self, config: dict[str, Any]) -> None:
        self.model = config.get("model")
        self.url = config.get("url") or os.environ.get("SEARCH_OLLAMA_URL") or DEFAULT_URL
        self.batched = self.url.rstrip("/").endswith("/api/embed")
        key = config.get("apiKey")
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        configured = config.get("dimensions")
        # Unset: asked of the model once, with one text.
        self.dimensions = int(configured) if configured else int(self._request(["test"]).shape[1])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        size = BATCH_SIZE if self.batched else 1
        parts = [self._checked(texts[start : start + size]) for start in range(0, len(texts), size)]
        return np.concatenate(parts) if parts else np.empty((0, self.dimensions), dtype=np.float32)

    def _checked(self, texts: Sequence[str]) -> np.ndarray:
        matrix = self._request(texts)
        return as_matrix(matrix, len(texts), self.dimensions, "Ollama")

    def _request(self, texts: Sequence[str]) -> np.ndarray:
        try:
            if self.batched:
                answer = post_json(
                    "Ollama", self.url, {"model": self.model, "input": list(texts)}, self.headers
                )
                rows = answer["embeddings"]
            else:
                (text,) = texts
                answer = post_json("Ollama", self.url, {"model": self.model, "prompt": text}, self.headers)
                rows = [answer["embedding"]]
        except (KeyError, TypeError):
            field = "embeddings" if self.batched else "embedding"
            raise EmbeddingError(f"Ollama: the answer of `{self.url}` has no `{field}` array") from None
        return as_matrix(rows, len(texts), None, "Ollama")
