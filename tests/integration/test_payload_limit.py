"""``--http-payload-size-limit``: bodies over the limit, raw or once decoded, get 413."""

from __future__ import annotations

import gzip
from collections.abc import Iterator

import httpx
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster


@pytest.fixture(scope="module")
def small_limit_cluster() -> Iterator[RunningCluster]:
    with RunningCluster("--http-payload-size-limit", "1KB", shards=1) as running:
        wait_task(running, client_for(running).create_index("movies").task_uid)
        yield running


def _post(cluster: RunningCluster, body: bytes, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{cluster.url}/indexes/movies/search",
        content=body,
        headers={"Content-Type": "application/json", **headers},
    )


def test_body_under_limit_is_accepted(small_limit_cluster: RunningCluster) -> None:
    body = b'{"q": "' + b"a" * 900 + b'"}'
    assert _post(small_limit_cluster, body).status_code == 200


def test_body_over_limit_is_413(small_limit_cluster: RunningCluster) -> None:
    response = _post(small_limit_cluster, b'{"q": "' + b"a" * 2000 + b'"}')
    assert response.status_code == 413
    assert response.json() == {
        "message": "The provided payload reached the size limit. The maximum accepted payload size is 1 KB.",
        "code": "payload_too_large",
        "type": "invalid_request",
        "link": "https://docs.meilisearch.com/errors#payload_too_large",
    }


def test_compressed_body_over_limit_once_decoded_is_413(small_limit_cluster: RunningCluster) -> None:
    compressed = gzip.compress(b'{"q": "' + b"a" * 5000 + b'"}')
    assert len(compressed) < 1000
    response = _post(small_limit_cluster, compressed, **{"Content-Encoding": "gzip"})
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
