"""The ``rest`` source: any HTTP embedding service, described by the ``request``/``response`` templates
(``common/rest_templates.py``). A batched template sends ``BATCH_SIZE`` texts per request, else one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from common.rest_templates import RestTemplateError, parse_rest_templates
from shard.embedding.base import Embedder, EmbeddingError, as_matrix
from shard.embedding.http import post_json

BATCH_SIZE: Final = 64


class RestEmbedder(Embedder):
    def __init__(self, config: dict[str, Any]) -> None:
        try:
            self.templates = parse_rest_templates(config.get("request"), config.get("response"))
        except RestTemplateError as error:
            raise EmbeddingError(error.message) from None
        self.url = str(config.get("url"))
        self.headers = dict(config.get("headers") or {})
        if config.get("apiKey"):
            self.headers["Authorization"] = f"Bearer {config['apiKey']}"
        configured = config.get("dimensions")
        # Unset: asked of the service once, with one text.
        self.dimensions = int(configured) if configured else int(self._request(["test"]).shape[1])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        size = BATCH_SIZE if self.templates.batched else 1
        parts = [self._checked(texts[start : start + size]) for start in range(0, len(texts), size)]
        return np.concatenate(parts) if parts else np.empty((0, self.dimensions), dtype=np.float32)

    def _checked(self, texts: Sequence[str]) -> np.ndarray:
        return as_matrix(self._request(texts), len(texts), self.dimensions, "REST")

    def _request(self, texts: Sequence[str]) -> np.ndarray:
        answer = post_json("REST", self.url, self.templates.render(texts), self.headers)
        try:
            rows = self.templates.embeddings(answer)
        except ValueError as error:
            raise EmbeddingError(
                f"REST: the answer of `{self.url}` does not match `response`: {error}"
            ) from None
        return as_matrix(rows, len(texts), None, "REST")
