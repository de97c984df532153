"""Embedder tests run in this process against real loopback servers, so loopback is allowed here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from common.outbound import AllowedNetworks
from shard.embedding import configure_outbound
from tests.support.embedding_servers import EmbeddingServer


@pytest.fixture(autouse=True)
def loopback_allowed() -> Iterator[None]:
    configure_outbound(AllowedNetworks.from_option("127.0.0.0/8"))
    yield
    configure_outbound(AllowedNetworks())


@pytest.fixture
def server(embedding_server: EmbeddingServer) -> EmbeddingServer:
    embedding_server.reset()
    return embedding_server
