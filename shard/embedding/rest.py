"""The ``rest`` source: any HTTP embedding service, described by the ``request``/``response`` templates
(``common/rest_templates.py``). A batched template sends ``BATCH_SIZE`` texts per request, else one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from common.rest_templates import RestTemplateError, parse_rest_templates
from shard.embedding.base import EmbeddingError
from shard.embedding.http import post_json
from shard.embedding.remote import RemoteEmbedder

BATCH_SIZE: Final = 64


class RestEmbedder(RemoteEmbedder):
    def __init__(self, config: dict[str, Any]) -> None:
        try:
            self.templates = parse_rest_templates(config.get("request"), config.get("response"))
        except RestTemplateError as error:
            raise EmbeddingError(error.detail) from None
        self.url = str(config.get("url"))
        self.batch_size = BATCH_SIZE if self.templates.batched else 1
        self.headers = dict(config.get("headers") or {})
        if config.get("apiKey"):
            self.headers["Authorization"] = f"Bearer {config['apiKey']}"
        self._set_dimensions(config.get("dimensions"))

    def _request(self, texts: Sequence[str]) -> Any:
        answer = post_json(self.url, self.templates.render(texts), self.headers)
        try:
            return self.templates.embeddings(answer)
        except ValueError as error:
            raise EmbeddingError(f"the answer of `{self.url}` does not match `response`: {error}") from None
