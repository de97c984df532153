"""Embedders: the text-to-vector side of vector search (search.md §6.11), one per embedder setting.

The seam the rest of the shard uses::

    embedder = embedder_for(config, side="indexing")  # or "search"; config as
        # common.settings.embedders.resolved_embedder returns it; never for "userProvided" (ValueError);
        # "composite" picks its indexingEmbedder / searchEmbedder
    embedder.dimensions                        # int
    embedder.embed_documents(texts)            # float32 (len(texts), dimensions); EmbeddingError
    embedder.embed_query(text)                 # float32 (dimensions,)
    regeneration_key(config)                   # changes iff every stored embedding must be regenerated
    check_composite(config)                    # a composite's two sides give the same vectors, else
                                               # EmbeddingError (once, when the setting is applied)
    configure_outbound(allowed)                # once per shard process (--experimental-allowed-ip-networks)

Built embedders are memoised per process by the fields that shape them (not the document template,
distribution or quantisation), so a local model is loaded once however many indexes use it. Building
may fail with ``EmbeddingError`` (unknown model, a provider that cannot answer the dimension probe);
a failed build is not remembered.
"""

from __future__ import annotations

import threading
from typing import Any, Final, Literal

import orjson

from common.outbound import AllowedNetworks
from shard.embedding import composite, http
from shard.embedding.base import Embedder, EmbeddingError
from shard.embedding.local import LocalEmbedder
from shard.embedding.ollama import OllamaEmbedder
from shard.embedding.openai import OpenAiEmbedder
from shard.embedding.rest import RestEmbedder

__all__ = [
    "Embedder",
    "EmbeddingError",
    "check_composite",
    "configure_outbound",
    "embedder_for",
    "regeneration_key",
]

Side = Literal["indexing", "search"]

_SHAPING: Final[dict[str, tuple[str, ...]]] = {
    "huggingFace": ("model", "revision", "pooling"),
    "openAi": ("model", "url", "apiKey", "dimensions"),
    "ollama": ("model", "url", "apiKey", "dimensions"),
    "rest": ("url", "request", "response", "headers", "apiKey", "dimensions"),
}
"""The fields an embedder of each source is built from: two configurations equal on them share it."""
_REGENERATING: Final[dict[str, tuple[str, ...]]] = {
    "huggingFace": ("model", "revision", "pooling"),
    "openAi": ("model", "dimensions"),
    "ollama": ("model", "url"),
    "rest": ("url", "request"),
    "userProvided": (),
}
"""search.md §6.11: changing ``source``, ``model``, ``revision``, ``pooling``, ``url`` (ollama, rest),
``request`` or ``dimensions`` (openAi) regenerates every embedding; nothing else does."""
_MEMO_SIZE: Final = 64

_memo: dict[bytes, Embedder] = {}
_building: dict[bytes, threading.Lock] = {}
_memo_lock = threading.Lock()


def configure_outbound(allowed: AllowedNetworks) -> None:
    """What HTTP embedders may reach besides public addresses (``--experimental-allowed-ip-networks``)."""
    http.configure(allowed)


def embedder_for(config: dict[str, Any], side: Side = "indexing") -> Embedder:
    """The embedder for one resolved embedder setting, built on first use and then shared."""
    source = config.get("source", "openAi")
    if source == "userProvided":
        raise ValueError("a `userProvided` embedder embeds nothing: its vectors come with the documents")
    if source == "composite":
        nested = config.get("searchEmbedder" if side == "search" else "indexingEmbedder")
        if not isinstance(nested, dict):
            raise ValueError(f"a composite embedder without its {side} embedder")
        return embedder_for(nested, "indexing")
    if source not in _SHAPING:
        raise EmbeddingError(f"Unknown embedder source `{source}`")
    key = orjson.dumps(
        [source, *(config.get(field) for field in _SHAPING[source])], option=orjson.OPT_SORT_KEYS
    )
    with _memo_lock:
        embedder = _memo.get(key)
        if embedder is not None:
            return embedder
        building = _building.setdefault(key, threading.Lock())
    # One build per configuration (two threads asking for a new model load it once), while other
    # configurations are served: an HTTP embedder's dimension probe may take its retries' time.
    with building:
        with _memo_lock:
            embedder = _memo.get(key)
        if embedder is None:
            try:
                embedder = _build(source, config)
            except BaseException:
                with _memo_lock:
                    _building.pop(key, None)
                raise
            with _memo_lock:
                if len(_memo) >= _MEMO_SIZE:
                    del _memo[next(iter(_memo))]
                _memo[key] = embedder
                _building.pop(key, None)
        return embedder


def _build(source: str, config: dict[str, Any]) -> Embedder:
    if source == "huggingFace":
        model = config.get("model", "BAAI/bge-base-en-v1.5")
        return LocalEmbedder(model, config.get("pooling", "useModel"), config.get("revision"))
    if source == "openAi":
        return OpenAiEmbedder(config)
    if source == "ollama":
        return OllamaEmbedder(config)
    return RestEmbedder(config)


def regeneration_key(config: dict[str, Any]) -> str:
    """Equal for two configurations of one embedder iff switching between them keeps its stored
    embeddings; a composite embedder's stored vectors are its indexing embedder's."""
    source = config.get("source", "openAi")
    if source == "composite":
        nested = config.get("indexingEmbedder")
        return orjson.dumps(
            ["composite", regeneration_key(nested if isinstance(nested, dict) else {})]
        ).decode()
    fields = _REGENERATING.get(source, ())
    return orjson.dumps(
        [source, *(config.get(field) for field in fields)], option=orjson.OPT_SORT_KEYS
    ).decode()


def check_composite(config: dict[str, Any]) -> None:
    """For a ``composite`` setting: its search and indexing embedders agree (``composite.py``)."""
    composite.check_composite(embedder_for(config, "indexing"), embedder_for(config, "search"))
