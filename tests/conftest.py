"""Shared fixtures: a real two-shard cluster per test module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.support.cluster import RunningCluster

if TYPE_CHECKING:
    from tests.support.embedding_servers import EmbeddingServer


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster(shards=2) as running:
        yield running


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[EmbeddingServer]:
    """Loopback OpenAI / Ollama / REST embedding routes answering with the local MiniLM's vectors
    (``tests/support/embedding_servers.py``); clusters reach it with
    ``--experimental-allowed-ip-networks 127.0.0.0/8``."""
    from tests.support.embedding_servers import running_server  # loads the model: only when asked

    yield from running_server()
