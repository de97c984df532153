"""The ``ollama`` source: ``/api/embed`` takes a list of texts per request, the older
``/api/embeddings`` one ``prompt`` per request."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Final

from shard.embedding.base import EmbeddingError
from shard.embedding.http import post_json
from shard.embedding.remote import RemoteEmbedder

DEFAULT_URL: Final = "http://localhost:11434/api/embeddings"
BATCH_SIZE: Final = 64


class OllamaEmbedder(RemoteEmbedder):
    def __init__(self, config: dict[str, Any]) -> None:
        self.model = config.get("model")
        self.url = config.get("url") or os.environ.get("SEARCH_OLLAMA_URL") or DEFAULT_URL
        self.batched = self.url.rstrip("/").endswith("/api/embed")
        self.batch_size = BATCH_SIZE if self.batched else 1
        key = config.get("apiKey")
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._set_dimensions(config.get("dimensions"))

    def _request(self, texts: Sequence[str]) -> Any:
        if self.batched:
            answer = post_json(self.url, {"model": self.model, "input": list(texts)}, self.headers)
            field = "embeddings"
        else:
            (text,) = texts
            answer = post_json(self.url, {"model": self.model, "prompt": text}, self.headers)
            field = "embedding"
        if not isinstance(answer, dict) or field not in answer:
            raise EmbeddingError(f"the answer of `{self.url}` has no `{field}` field", "runtime")
        return answer[field] if self.batched else [answer[field]]
