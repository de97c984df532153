"""The ``rest`` source: any HTTP embedding service, described by the ``request``/``response`` templates
(``common/rest_templates.py``). A batched template sends ``BATCH_SIZE`` texts per request, else one.
An embedder with multimodal fragments receives each input as a rendered fragment's JSON text
(``fragments.py``) and sends it decoded, at ``"{{fragment}}"``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import orjson

from common.rest_templates import FRAGMENT, TEXT, RestTemplateError, parse_rest_templates
from shard.embedding.base import EmbeddingError
from shard.embedding.fragments import uses_fragments
from shard.embedding.http import post_json
from shard.embedding.remote import RemoteEmbedder

BATCH_SIZE: Final = 64


class RestEmbedder(RemoteEmbedder):
    def __init__(self, config: dict[str, Any]) -> None:
        self.fragments = uses_fragments(config)
        if self.fragments:
            self.probe = orjson.dumps(self.probe).decode()
        placeholder = FRAGMENT if self.fragments else TEXT
        try:
            self.templates = parse_rest_templates(config.get("request"), config.get("response"), placeholder)
        except RestTemplateError as error:
            raise EmbeddingError(error.detail) from None
        self.url = str(config.get("url"))
        self.batch_size = BATCH_SIZE if self.templates.batched else 1
        self.headers = dict(config.get("headers") or {})
        if config.get("apiKey"):
            self.headers["Authorization"] = f"Bearer {config['apiKey']}"
        self._set_dimensions(config.get("dimensions"))

    def _request(self, texts: Sequence[str]) -> Any:
        inputs = [orjson.loads(text) for text in texts] if self.fragments else texts
        answer = post_json(self.url, self.templates.render(inputs), self.headers)
        try:
            return self.templates.embeddings(answer)
        except ValueError as error:
            raise EmbeddingError(f"the answer of `{self.url}` does not match `response`: {error}") from None
