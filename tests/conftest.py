"""Shared fixtures: a real two-shard cluster per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.cluster import RunningCluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster(shards=2) as running:
        yield running
