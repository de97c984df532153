"""The ``openAi`` source: ``POST {url}`` with ``{"input": [texts], "model": …}``, batched."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Final

from shard.embedding.base import EmbeddingError
from shard.embedding.http import post_json
from shard.embedding.remote import RemoteEmbedder

DEFAULT_URL: Final = "https://api.openai.com/v1/embeddings"
NATIVE_DIMENSIONS: Final = {
    "text-embedding-ada-002": 1536,
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
}
BATCH_SIZE: Final = 64
"""Texts per request (the API takes up to 2048, but one failure then re-sends them all)."""


class OpenAiEmbedder(RemoteEmbedder):
    def __init__(self, config: dict[str, Any]) -> None:
        self.model = config.get("model", "text-embedding-3-small")
        if self.model not in NATIVE_DIMENSIONS:
            raise EmbeddingError(
                f"Invalid model `{self.model}` for OpenAI. Supported models: {list(NATIVE_DIMENSIONS)}"
            )
        self.url = config.get("url") or DEFAULT_URL
        self.batch_size = BATCH_SIZE
        key = (
            config.get("apiKey")
            or os.environ.get("SEARCH_OPENAI_API_KEY")
            or os.environ.get("OPENAI_API_KEY")
        )
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        requested = config.get("dimensions")
        # Only the -3- models shorten their vectors on request; ada's are always 1536 long.
        self.send_dimensions = requested is not None and "-3-" in self.model
        self._set_dimensions(requested or NATIVE_DIMENSIONS[self.model])

    def _request(self, texts: Sequence[str]) -> Any:
        body: dict[str, Any] = {"input": list(texts), "model": self.model}
        if self.send_dimensions:
            body["dimensions"] = self.dimensions
        answer = post_json(self.url, body, self.headers)
        try:
            data = sorted(answer["data"], key=lambda item: item.get("index", 0))
            return [item["embedding"] for item in data]
        except (KeyError, TypeError, AttributeError):
            raise EmbeddingError(
                f"the answer of `{self.url}` has no `data[].embedding` arrays", "runtime"
            ) from None
