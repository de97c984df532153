"""HTTP conventions of the contract (core.md §1) against a real cluster."""

from __future__ import annotations

import gzip
import zlib

import brotli
import httpx
import orjson
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster


def test_health_is_available(cluster: RunningCluster) -> None:
    response = httpx.get(f"{cluster.url}/health")
    assert response.status_code == 200
    assert response.json() == {"status": "available"}


def test_version_has_contract_fields(cluster: RunningCluster) -> None:
    body = httpx.get(f"{cluster.url}/version").json()
    assert list(body) == ["commitSha", "commitDate", "pkgVersion"]
    assert body["pkgVersion"] == "0.1.0"
    assert len(body["commitSha"]) == 40 or body["commitSha"] == "unknown"


def test_root_answers_json_status(cluster: RunningCluster) -> None:
    response = httpx.get(f"{cluster.url}/")
    assert response.status_code == 200
    assert response.json() == {"status": "Sift is running"}


def test_unknown_route_is_404_with_empty_body(cluster: RunningCluster) -> None:
    response = httpx.get(f"{cluster.url}/doggo")
    assert response.status_code == 404
    assert response.content == b""


def test_wrong_method_is_405_with_empty_body(cluster: RunningCluster) -> None:
    response = httpx.delete(f"{cluster.url}/health")
    assert response.status_code == 405
    assert response.content == b""


@pytest.mark.parametrize("path", ["/health/", "//health", "/health//"])
def test_slashes_are_normalised(cluster: RunningCluster, path: str) -> None:
    response = httpx.get(f"{cluster.url}{path}")
    assert response.status_code == 200
    assert response.json() == {"status": "available"}


def test_cors_preflight_on_any_path(cluster: RunningCluster) -> None:
    response = httpx.options(
        f"{cluster.url}/indexes/movies/search",
        headers={"Origin": "https://example.org", "Access-Control-Request-Method": "POST"},
    )
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "*"
    assert response.headers["access-control-max-age"] == "86400"
    assert "POST" in response.headers["access-control-allow-methods"]


def test_cors_header_on_responses_and_errors(cluster: RunningCluster) -> None:
    assert httpx.get(f"{cluster.url}/health").headers["access-control-allow-origin"] == "*"
    assert httpx.get(f"{cluster.url}/doggo").headers["access-control-allow-origin"] == "*"


@pytest.fixture(scope="module")
def movies_index(cluster: RunningCluster) -> str:
    wait_task(cluster, client_for(cluster).create_index("movies").task_uid)
    return "movies"


def _search_query(cluster: RunningCluster, body: bytes, encoding: str) -> httpx.Response:
    return httpx.post(
        f"{cluster.url}/indexes/movies/search",
        content=body,
        headers={"Content-Type": "application/json", "Content-Encoding": encoding},
    )


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [("gzip", gzip.compress), ("deflate", zlib.compress), ("br", brotli.compress)],
)
def test_compressed_request_bodies_are_decoded(
    cluster: RunningCluster, movies_index: str, encoding: str, compress: object
) -> None:
    body = orjson.dumps({"q": f"hello {encoding}"})
    response = _search_query(cluster, compress(body), encoding)  # type: ignore[operator]
    assert response.status_code == 200
    assert response.json()["query"] == f"hello {encoding}"


def test_corrupt_compressed_body_is_bad_request(cluster: RunningCluster) -> None:
    response = _search_query(cluster, b"definitely not gzip", "gzip")
    assert response.status_code == 400
    assert response.json()["code"] == "bad_request"
    assert response.json()["type"] == "invalid_request"
