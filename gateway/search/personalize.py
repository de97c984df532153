"""Personalized search (the ``personalize`` parameter, ``--experimental-personalization-api-key``).

The hits of the page a search returns are reordered among themselves by a reranking provider speaking
Cohere's rerank API (``POST <--experimental-personalization-url>/v2/rerank``, the reference engine's
provider): the query is the user context followed by the search's query text, each hit a document
written as ``field: value`` lines. No hit enters or leaves the page, and the hits keep their
``_rankingScore``. The request goes through the outbound guard (``common/outbound.py``), so a provider
on a private network needs ``--experimental-allowed-ip-networks``. A provider that fails, answers
something else, or takes longer than ``TIMEOUT_S`` leaves the page in its search order, logged: a
search never fails because of personalization.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from common.config import Config
from common.errors import ApiError
from common.logging import get_logger
from common.outbound import AllowedNetworks, OutboundClient, OutboundRefused

log = get_logger(__name__)

TIMEOUT_S = 3.0
"""A personalized search waits at most this long for the provider (Cohere answers a page in well
under a second), then shows the unpersonalized order."""
MAX_DOCUMENT_CHARS = 4096
"""A hit is cut to this many characters of text: the provider reads a bounded prefix of each document
anyway, and a page of large documents would make a request of megabytes."""
_MAX_ANSWER_BYTES = 1 << 20
_CONNECTIONS = 16


class PersonalizationFailed(Exception):
    """The provider could not rerank this page; the message says why (never the API key)."""


def feature_not_enabled() -> ApiError:
    """The reference's error when ``personalize`` is given without a provider key."""
    return ApiError(
        "feature_not_enabled",
        "reranking search results requires enabling the `personalization` experimental feature. "
        "See https://github.com/orgs/meilisearch/discussions/866",
    )


@dataclass
class Reranker:
    client: OutboundClient
    url: str
    api_key: str
    model: str
    counted: Callable[[], None] = dataclasses.field(default=lambda: None)
    """Called once per personalized search (the ``meilisearch_personalized_search_requests`` gauge)."""

    @classmethod
    def from_config(cls, config: Config) -> Reranker | None:
        """None without ``--experimental-personalization-api-key``: ``personalize`` is then refused."""
        if config.experimental_personalization_api_key is None:
            return None
        allowed = AllowedNetworks.from_option(config.experimental_allowed_ip_networks)
        return cls(
            OutboundClient(allowed, TIMEOUT_S, _CONNECTIONS),
            config.experimental_personalization_url.rstrip("/") + "/v2/rerank",
            config.experimental_personalization_api_key,
            config.experimental_personalization_model,
        )

    async def rerank(self, user_context: str, queries: list[str], hits: list[Any]) -> list[Any]:
        """``hits`` in the provider's order, or as given when it fails (logged)."""
        self.counted()
        if len(hits) < 2 or not user_context.strip():
            return hits
        try:
            order = await self._order(_query(user_context, queries), [_document(hit) for hit in hits])
        except PersonalizationFailed as error:
            log.warning("personalization failed; hits kept in search order", reason=str(error))
            return hits
        return [hits[i] for i in order]

    async def _order(self, query: str, documents: list[str]) -> list[int]:
        body = orjson.dumps(
            {"model": self.model, "query": query, "documents": documents, "top_n": len(documents)}
        )
        headers = [
            (b"Authorization", f"Bearer {self.api_key}".encode()),
            (b"Content-Type", b"application/json"),
            (b"Accept", b"application/json"),
        ]
        try:
            status, answer = await self.client.ask(self.url, body, headers, _MAX_ANSWER_BYTES)
        except TimeoutError:
            raise PersonalizationFailed(f"the provider did not answer within {TIMEOUT_S:g} s") from None
        except (OutboundRefused, httpx.HTTPError) as error:
            raise PersonalizationFailed(f"the request to the provider failed: {error}") from None
        if status != 200:
            raise PersonalizationFailed(
                f"the provider answered {status}: {answer[:200].decode(errors='replace')}"
            )
        return _ranked_indexes(answer, len(documents))

    async def close(self) -> None:
        await self.client.close()


def _query(user_context: str, queries: list[str]) -> str:
    """The user context first (what the provider should favour), then what was searched."""
    searched = "; ".join(q.strip() for q in queries if q and q.strip())
    return f"{user_context.strip()}\nSearch query: {searched}" if searched else user_context.strip()


def _document(hit: dict[str, Any] | orjson.Fragment) -> str:
    """A hit as ``field: value`` lines (Cohere's advice for structured documents), without the fields
    the engine adds (``_formatted``, ``_rankingScore``, ``_vectors``, ...). ``hit``: an object, or
    the JSON fragment a shard sent."""
    # A Fragment does not expose its bytes.
    fields = orjson.loads(orjson.dumps(hit)) if isinstance(hit, orjson.Fragment) else hit
    lines = []
    for field, value in fields.items():
        if field.startswith("_"):
            continue
        text = value if isinstance(value, str) else orjson.dumps(value).decode()
        lines.append(f"{field}: {text}")
    return "\n".join(lines)[:MAX_DOCUMENT_CHARS]


def _ranked_indexes(answer: bytes, count: int) -> list[int]:
    """The ``results[].index`` of a rerank answer, checked: each document once. Documents the answer
    leaves out follow in their search order."""
    try:
        results = orjson.loads(answer)["results"]
        indexes = [result["index"] for result in results]
    except (orjson.JSONDecodeError, KeyError, TypeError) as error:
        raise PersonalizationFailed(f"the provider's answer is not a rerank result: {error}") from None
    if not all(type(i) is int and 0 <= i < count for i in indexes) or len(set(indexes)) != len(indexes):
        raise PersonalizationFailed("the provider's answer does not rank each document of the page once")
    ranked = set(indexes)
    return indexes + [i for i in range(count) if i not in ranked]


async def personalized(
    reranker: Reranker | None,
    personalize: dict[str, Any] | None,
    queries: list[str],
    hits: list[Any],
) -> list[Any]:
    """A response's hits under its ``personalize`` parameter (``queries``: the query texts searched).
    Called once the search has run, so that its own errors come first, as the reference's do."""
    if personalize is None:
        return hits
    if reranker is None:
        raise feature_not_enabled()
    return await reranker.rerank(personalize["userContext"], queries, hits)
