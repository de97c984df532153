# ruff: noqa: E501 - the expected messages are the reference's
"""Multimodal fragments embedded through the cluster (search.md §6.11, §1.3, §7.6; experimental
``multimodal``), against a real REST provider on loopback whose vector is a function of the colour
words in the fragment it receives:

- indexing: each document sends each indexing fragment that renders (a fragment naming a field the
  document lacks is skipped) at ``"{{fragment}}"``, gets one embedding per fragment sent, and is sent
  again (all its fragments) only when what its fragments render changes;
- search: ``media`` (or ``q``) renders the one search fragment it matches, which is embedded and
  searched; no match or several matches, ``media`` with an embedder without fragments, and ``media``
  with the feature off are the reference's errors (Meilisearch 1.50, asked with the same bodies).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import orjson
import pytest

from tests.support.client import client_for, switch_features, wait_task
from tests.support.cluster import RunningCluster

COLOURS = ("red", "green", "blue", "yellow")
UID = "multimodal"
EMBEDDING = "vector_embedding_error"
USER_ERROR = "Error while generating embeddings: user error: "


class FragmentServer:
    """``POST /embed`` ``{"inputs": [fragment, ...]}`` -> ``{"data": [{"v": vector}, ...]}``: the
    vector counts each colour's name in the fragment's JSON (plus a small constant), and every
    fragment received is kept."""

    def __init__(self) -> None:
        self.received: list[Any] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.received.extend(body["inputs"])
                data = [{"v": _vector(fragment)} for fragment in body["inputs"]]
                payload = orjson.dumps({"data": data})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/embed"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def take(self) -> list[Any]:
        received, self.received = self.received, []
        return received


def _vector(fragment: Any) -> list[float]:
    text = orjson.dumps(fragment).decode()
    return [text.count(colour) + 0.01 for colour in COLOURS]


def _embedder(url: str) -> dict[str, Any]:
    return {
        "source": "rest",
        "url": url,
        "dimensions": len(COLOURS),
        "request": {"inputs": ["{{fragment}}", "{{..}}"]},
        "response": {"data": [{"v": "{{embedding}}"}, "{{..}}"]},
        "indexingFragments": {
            "text": {"value": {"type": "text", "text": "{{doc.title}}"}},
            "image": {"value": {"type": "image_url", "url": "{{doc.image}}"}},
        },
        "searchFragments": {
            "query": {"value": {"type": "text", "text": "{{q}}"}},
            "image": {"value": {"type": "image_url", "url": "{{media.image}}"}},
        },
    }


DOCS = [
    {"id": 1, "title": "an apple", "image": "http://img/red.png"},
    {"id": 2, "title": "a leaf", "image": "http://img/green.png"},
    {"id": 3, "title": "the blue sea"},
    {"id": 4, "caption": "no title, no image"},
]
OPTED_OUT = {"_vectors": {"up": None}}
"""Every document opts out of the ``userProvided`` embedder, there to be refused ``media``."""


@pytest.fixture(scope="module")
def server() -> Iterator[FragmentServer]:
    running = FragmentServer()
    yield running
    running.httpd.shutdown()
    running.httpd.server_close()


@pytest.fixture(scope="module")
def cluster(server: FragmentServer) -> Iterator[RunningCluster]:
    with RunningCluster("--experimental-allowed-ip-networks", "127.0.0.0/8", shards=2) as running:
        switch_features(running, multimodal=True)
        index = client_for(running).index(UID)
        settings = {"embedders": {"mm": _embedder(server.url), "up": {"source": "userProvided", "dimensions": 4}}}
        task = wait_task(running, index.update_settings(settings).task_uid)
        assert task["status"] == "succeeded", task
        task = wait_task(running, index.add_documents([{**doc, **OPTED_OUT} for doc in DOCS], primary_key="id").task_uid)
        assert task["status"] == "succeeded", task["error"]
        yield running


def _sorted(fragments: list[Any]) -> list[str]:
    return sorted(orjson.dumps(fragment).decode() for fragment in fragments)


def _update(cluster: RunningCluster, body: Any, settings: bool = False) -> None:
    index = client_for(cluster).index(UID)
    info = index.update_settings(body) if settings else index.update_documents(body)
    task = wait_task(cluster, info.task_uid)
    assert task["status"] == "succeeded", task


def test_documents_embed_each_fragment_that_renders(cluster: RunningCluster, server: FragmentServer) -> None:
    sent = server.take()
    assert _sorted(sent) == _sorted(
        [
            {"type": "text", "text": "an apple"},
            {"type": "image_url", "url": "http://img/red.png"},
            {"type": "text", "text": "a leaf"},
            {"type": "image_url", "url": "http://img/green.png"},
            {"type": "text", "text": "the blue sea"},
        ]
    )
    stats = httpx.get(f"{cluster.url}/indexes/{UID}/stats").json()
    assert (stats["numberOfEmbeddings"], stats["numberOfEmbeddedDocuments"]) == (5, 3)
    shown = httpx.get(f"{cluster.url}/indexes/{UID}/documents/1", params={"retrieveVectors": "true"}).json()
    # one embedding per fragment, in the fragments' name order: image, then text
    assert shown["_vectors"]["mm"] == {"embeddings": [[1.01, 0.01, 0.01, 0.01], [0.01] * 4], "regenerate": True}

    _update(cluster, [{"id": 1, "price": 3}, {"id": 2, "image": "http://img/yellow.png"}])
    assert _sorted(server.take()) == _sorted(
        [{"type": "text", "text": "a leaf"}, {"type": "image_url", "url": "http://img/yellow.png"}]
    )
    _update(cluster, [{"id": 4, "title": "green grass"}])
    assert server.take() == [{"type": "text", "text": "green grass"}]
    stats = httpx.get(f"{cluster.url}/indexes/{UID}/stats").json()
    assert (stats["numberOfEmbeddings"], stats["numberOfEmbeddedDocuments"]) == (6, 4)

    # searchFragments never regenerate; a changed indexing fragment re-embeds what it renders
    embedder = _embedder(server.url)
    _update(cluster, {"embedders": {"mm": {**embedder, "searchFragments": {**embedder["searchFragments"], "extra": None}}}}, settings=True)
    assert server.take() == []
    text = {"value": {"type": "text", "text": "{{doc.title}}", "lang": "en"}}
    _update(cluster, {"embedders": {"mm": {**embedder, "indexingFragments": {"text": text}}}}, settings=True)
    # (a document whose fragments render anything new sends all of its fragments again)
    assert _sorted(server.take()) == _sorted(
        [{"type": "text", "text": title, "lang": "en"} for title in ("an apple", "a leaf", "the blue sea", "green grass")]
        + [{"type": "image_url", "url": f"http://img/{colour}.png"} for colour in ("red", "yellow")]
    )


def _search(cluster: RunningCluster, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{cluster.url}/indexes/{UID}/search", json=body, timeout=30)


def test_media_and_q_render_a_search_fragment(cluster: RunningCluster, server: FragmentServer) -> None:
    server.take()
    index = client_for(cluster).index(UID)
    found = index.search(None, {"media": {"image": "http://img/yellow.png"}, "hybrid": {"embedder": "mm"}, "limit": 1})
    assert [hit["id"] for hit in found["hits"]] == [2]
    assert server.take() == [{"type": "image_url", "url": "http://img/yellow.png"}]
    queries = [{"indexUid": UID, "media": {"image": "http://img/red.png"}, "hybrid": {"embedder": "mm"}, "limit": 1}]
    found = client_for(cluster).multi_search(queries)["results"][0]
    assert [hit["id"] for hit in found["hits"]] == [1]
    assert server.take() == [{"type": "image_url", "url": "http://img/red.png"}]
    found = index.search("blue", {"hybrid": {"embedder": "mm", "semanticRatio": 1.0}, "limit": 1})
    assert [hit["id"] for hit in found["hits"]] == [3]
    assert server.take() == [{"type": "text", "text": "blue"}]
    # a hybrid search whose query matches two fragments (`q` and `media.image`) answers with its keywords
    found = index.search("apple", {"media": {"image": "x"}, "hybrid": {"embedder": "mm"}})
    assert ([hit["id"] for hit in found["hits"]], found["semanticHitCount"]) == ([1], 0)


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            {"media": {"nothing": 1}},
            EMBEDDING,
            USER_ERROR + 'Query matches no search fragment.\n  - Note: {"q":null,"media":{"nothing":1}}',
        ),
        (
            {"media": 5},
            EMBEDDING,
            USER_ERROR + 'Query matches no search fragment.\n  - Note: {"q":null,"media":5}',
        ),
        (
            {"q": "", "media": {"image": "a"}},
            EMBEDDING,
            USER_ERROR + "Query matches multiple search fragments.\n  - Note: First matched fragment `image`."
            '\n  - Note: Second matched fragment `query`.\n  - Note: {"q":"","media":{"image":"a"}}',
        ),
        (
            {"media": {"image": "a"}, "hybrid": {"embedder": "up"}},
            EMBEDDING,
            USER_ERROR + "`media` requested but the configuration doesn't have source `rest`",
        ),
        (
            {"media": {"image": "a"}, "hybrid": {"embedder": "nope"}},
            "invalid_search_embedder",
            "Cannot find embedder with name `nope`.",
        ),
    ],
)
def test_media_errors(cluster: RunningCluster, body: dict[str, Any], code: str, message: str) -> None:
    response = _search(cluster, {"hybrid": {"embedder": "mm"}, **body})
    assert response.status_code == 400, response.text
    assert (response.json()["code"], response.json()["message"]) == (code, message)


def test_media_needs_the_multimodal_feature(cluster: RunningCluster) -> None:
    switch_features(cluster, multimodal=False)
    try:
        response = _search(cluster, {"media": {"image": "a"}, "hybrid": {"embedder": "mm"}})
    finally:
        switch_features(cluster, multimodal=True)
    assert response.status_code == 400, response.text
    assert response.json() == {
        "message": "passing `media` in a search query requires enabling the `multimodal` experimental feature. See https://github.com/orgs/meilisearch/discussions/846",
        "code": "feature_not_enabled",
        "type": "invalid_request",
        "link": "https://docs.meilisearch.com/errors#feature_not_enabled",
    }
