"""Query texts embedded for semantic and hybrid searches, and the cache of their embeddings.

The gateway sends a query's text to one shard, chosen by a hash of the text (``Embed`` rpc), so a
repeated query finds its vector in that shard's cache. The cache is an LRU of
``--experimental-embedding-cache-entries`` per search-side configuration: its key is the canonical
form of what shapes the vector (the configuration without its document template, distribution and
quantisation), so two indexes with identical embedders share their entries.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Final

import numpy as np
import orjson

from shard.embedding import EmbeddingError, embedder_for
from shard.embedding.fragments import search_input, uses_fragments

_NOT_SHAPING: Final = frozenset(
    {"documentTemplate", "documentTemplateMaxBytes", "distribution", "binaryQuantized", "indexingFragments"}
)
"""Fields that change how documents are embedded or scored, never a query's vector."""


def search_side(config: dict[str, Any]) -> dict[str, Any]:
    """The configuration that embeds queries: a composite embedder's ``searchEmbedder``."""
    if config.get("source") == "composite":
        nested = config.get("searchEmbedder")
        return nested if isinstance(nested, dict) else {}
    return config


def cache_key(config: dict[str, Any]) -> bytes:
    """The canonical form of a search-side configuration (see the module docstring)."""
    shaping = {name: value for name, value in search_side(config).items() if name not in _NOT_SHAPING}
    return orjson.dumps(shaping, option=orjson.OPT_SORT_KEYS)


def expected_dimensions(config: dict[str, Any]) -> int | None:
    """The dimensions a query vector must have: set, or the embedder's (None when unknown, e.g. a
    remote provider that cannot answer: the embedding itself will fail then)."""
    dimensions = config.get("dimensions")
    if isinstance(dimensions, int):
        return dimensions
    if config.get("source") == "userProvided":
        return None
    try:
        return embedder_for(config, side="search").dimensions
    except (EmbeddingError, ValueError):
        return None


def user_provided_error(text: str) -> EmbeddingError:
    """The reference's answer to embedding a query with an embedder whose vectors come with the
    documents (a semantic search without ``vector``)."""
    return EmbeddingError(
        "attempt to embed the following text in a configuration where embeddings must be user"
        f" provided:\n  - `{text}`"
    )


class QueryEmbeddings:
    """The shard's query embedder: ``entries`` per configuration, least recently used out first."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self._caches: dict[bytes, OrderedDict[str, np.ndarray]] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def embed(self, config: dict[str, Any], text: str, fragments: dict[str, Any] | None = None) -> np.ndarray:
        """``text`` embedded by ``config``'s search side; raises the contract's errors. A multimodal
        embedder embeds its search fragment that renders for ``text`` as ``q``, or for ``fragments``
        (``{"q", "media"}``, a search with ``media``), cached under the fragment's JSON."""
        if fragments is not None:
            text = search_input(config, fragments.get("q"), fragments.get("media"))
        elif uses_fragments(config):
            text = search_input(config, text, None)
        if config.get("source") == "userProvided":
            raise user_provided_error(text)
        key = cache_key(config)
        cached = self._get(key, text)
        if cached is not None:
            return cached
        vector = embedder_for(config, side="search").embed_query(text)  # EmbeddingError: the contract's
        self._put(key, text, vector)
        return vector

    def _get(self, key: bytes, text: str) -> np.ndarray | None:
        if self.entries == 0:
            return None
        with self._lock:
            cache = self._caches.get(key)
            vector = None if cache is None else cache.get(text)
            if vector is None:
                self.misses += 1
                return None
            cache.move_to_end(text)  # type: ignore[union-attr]
            self.hits += 1
            return vector

    def _put(self, key: bytes, text: str, vector: np.ndarray) -> None:
        if self.entries == 0:
            return
        with self._lock:
            cache = self._caches.setdefault(key, OrderedDict())
            cache[text] = vector
            while len(cache) > self.entries:
                cache.popitem(last=False)
