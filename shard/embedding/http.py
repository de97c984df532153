"""JSON over HTTP to an embedding provider: the outbound guard, timeouts, bounded retries.

One guarded client per process (``configure``, from ``--experimental-allowed-ip-networks``), shared by
every HTTP embedder: the batch thread and the rpc threads call it at once. Connection errors,
timeouts, 429 and 5xx are retried with exponential backoff and full jitter, a bounded number of
times; any other status is the provider's final word. Errors name the provider's answer (status and
the start of its body) but never the request's headers, which hold the API key.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Final

import httpx
import orjson

from common.outbound import AllowedNetworks, OutboundRefused, SyncOutboundClient
from shard.embedding.base import EmbeddingError

TIMEOUT_S: Final = 30.0
"""Per network operation (connect, each read): a slow provider is waited for, a dead one is not."""
MAX_CONNECTIONS: Final = 16
MAX_ANSWER_BYTES: Final = 256 * 1024 * 1024
"""An answer holds a batch of vectors as JSON (~12 bytes per number): room for any real batch."""
_EXCERPT: Final = 200


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 6
    """Tries in all: with the delays below, a provider down for ~3 s is waited for."""
    first_delay_s: float = 0.1
    max_delay_s: float = 10.0

    def delay(self, attempt: int) -> float:
        """Full jitter (uniform in [0, cap]) spreads the retries of many batches hitting one provider."""
        return random.uniform(0, min(self.max_delay_s, self.first_delay_s * 2**attempt))


RETRY: Final = RetryPolicy()

_lock = threading.Lock()
_client: SyncOutboundClient | None = None
_allowed = AllowedNetworks()


def configure(allowed: AllowedNetworks) -> None:
    """What outbound requests may reach besides public addresses; once per process, before embedding."""
    global _client, _allowed
    with _lock:
        _allowed = allowed
        if _client is not None:
            _client.close()
            _client = None


def _outbound() -> SyncOutboundClient:
    global _client
    with _lock:
        if _client is None:
            _client = SyncOutboundClient(_allowed, TIMEOUT_S, MAX_CONNECTIONS, MAX_ANSWER_BYTES)
        return _client


def post_json(url: str, body: Any, headers: dict[str, str], retry: RetryPolicy = RETRY) -> Any:
    """The server's JSON answer to ``body``; ``EmbeddingError`` once it refuses or the retries are spent."""
    content = orjson.dumps(body)
    raw_headers = [(b"Content-Type", b"application/json")] + [
        (name.encode(), value.encode()) for name, value in headers.items()
    ]
    last = ""
    for attempt in range(retry.attempts):
        if attempt:
            time.sleep(retry.delay(attempt - 1))
        try:
            status, answer = _outbound().post(url, content, raw_headers)
        except OutboundRefused as error:
            raise EmbeddingError(
                f"could not reach embedding server `{url}`:\n  - {error}", "runtime"
            ) from None
        except httpx.TimeoutException:
            last = f"could not reach embedding server `{url}`:\n  - no answer within {TIMEOUT_S:g} s"
            continue
        except httpx.HTTPError as error:
            last = f"could not reach embedding server `{url}`:\n  - {error or type(error).__name__}"
            continue
        if 200 <= status < 300:
            try:
                return orjson.loads(answer)
            except orjson.JSONDecodeError:
                raise EmbeddingError(
                    f"embedding server `{url}` answered with a body that is not JSON:\n"
                    f"  - server replied with `{_excerpt(answer)}`",
                    "runtime",
                ) from None
        last = (
            f"embedding server `{url}` answered HTTP {status}:\n  - server replied with `{_excerpt(answer)}`"
        )
        if status in (401, 403):
            raise EmbeddingError(last + "\n  - Hint: check the `apiKey` or `headers` of the embedder")
        if status != 429 and status < 500:
            raise EmbeddingError(last)
    raise EmbeddingError(f"{last}\n  - gave up after {retry.attempts} attempts", "runtime")


def _excerpt(answer: bytes) -> str:
    text = answer[: _EXCERPT * 4].decode("utf-8", "replace").strip()
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"
