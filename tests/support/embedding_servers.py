"""Real embedding providers on loopback for tests: OpenAI, Ollama, a custom REST shape and Cohere's
rerank, one server.

Every route answers with the vectors of the local all-MiniLM-L6-v2 (the ``huggingFace`` embedder's
model), so a document embedded through any source is comparable with any other. Knobs the tests need:
fail the next N requests with a status, fail or delay the requests holding given texts, delay answers,
require an API key, count requests and texts, keep the last request. The server runs in daemon
threads and shuts itself down after ``lifetime_s`` if a test forgets to stop it. Shards reach it only
when started with ``--experimental-allowed-ip-networks 127.0.0.0/8`` (or ``any``).

Routes (``url`` is ``EmbeddingServer.url``):
- ``POST /v1/embeddings``: OpenAI; ``input`` a string or a list; ``dimensions`` shortens (and
  re-normalises) the vectors; without it they are padded with zeros to the model's native length
  (1536, 3072), which keeps every cosine the same.
- ``POST /api/embed`` (``input`` string or list -> ``embeddings``) and ``POST /api/embeddings``
  (``prompt`` -> ``embedding``): Ollama.
- ``POST /rest``: ``{"texts": [...]}`` -> ``{"data": [{"embedding": [...]}, ...]}`` (``REST_BATCH``), or
  ``{"input": {"text": "..."}}`` -> ``{"result": {"vector": [...]}}`` (``REST_SINGLE``).
- ``POST /v2/rerank``: Cohere's rerank (``model``, ``query``, ``documents``, ``top_n``) -> ``results`` of
  ``{index, relevance_score}``, best first, the score being the cosine of document and query vectors
  (the gateway's personalization provider).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import orjson

from shard.embedding import Embedder, embedder_for

MINILM = {"source": "huggingFace", "model": "sentence-transformers/all-MiniLM-L6-v2", "pooling": "useModel"}
DIMENSIONS = 384
OPENAI_NATIVE = {
    "text-embedding-ada-002": 1536,
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
}
REST_BATCH = {
    "request": {"model": "minilm", "texts": ["{{text}}", "{{..}}"]},
    "response": {"data": [{"embedding": "{{embedding}}"}, "{{..}}"]},
}
REST_SINGLE = {
    "request": {"input": {"text": "{{text}}"}},
    "response": {"result": {"vector": "{{embedding}}"}},
}


def local_model() -> Embedder:
    """The model behind every route (loaded once per process)."""
    return embedder_for(MINILM)


class EmbeddingServer:
    def __init__(self, lifetime_s: float = 900.0) -> None:
        self.model = local_model()
        self._lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        """Requests received per path (failed ones included)."""
        self.texts: Counter[str] = Counter()
        """Texts embedded per path."""
        self.last_body: Any = None
        self.last_headers: dict[str, str] = {}
        self.delay_s = 0.0
        self.api_key: str | None = None
        self._failures: list[tuple[int, bytes]] = []
        self.failing_texts: set[str] = set()
        """A request holding one of these texts answers 400 (not retried), whenever it comes: a text
        one shard holds fails that shard's requests only."""
        self.slow_texts: dict[str, float] = {}
        """A request holding one of these texts is answered after that many seconds."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self._deadline = threading.Timer(lifetime_s, self.stop)
        self._deadline.daemon = True
        self._deadline.start()

    def fail_next(self, count: int, status: int, body: bytes = b'{"error": "injected failure"}') -> None:
        """The next ``count`` requests answer ``status`` with ``body`` instead of vectors."""
        with self._lock:
            self._failures.extend([(status, body)] * count)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.texts.clear()
            self._failures.clear()
            self.failing_texts = set()
            self.slow_texts = {}
            self.delay_s = 0.0
            self.api_key = None
            self.last_body = None
            self.last_headers = {}

    def stop(self) -> None:
        self._deadline.cancel()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> EmbeddingServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.embed_documents(texts)

    def _answer(self, path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        with self._lock:
            self.requests[path] += 1
            self.last_body = body
            self.last_headers = headers
            failure = self._failures.pop(0) if self._failures else None
            delay, key = self.delay_s, self.api_key
        if delay:
            time.sleep(delay)
        if failure is not None:
            return failure[0], failure[1]
        if key is not None and headers.get("authorization") != f"Bearer {key}":
            return 401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
        route = _ROUTES.get(path)
        if route is None:
            return 404, {"error": f"no route {path}"}
        try:
            texts, shape = route(body)
        except (KeyError, TypeError, ValueError) as error:
            return 400, {"error": f"bad request: {error!r}"}
        time.sleep(max((self.slow_texts.get(text, 0.0) for text in texts), default=0.0))
        if self.failing_texts.intersection(texts):
            return 400, {"error": "this text cannot be embedded"}
        with self._lock:
            self.texts[path] += len(texts)
        return 200, shape(body, self.embed(texts))


def _listed(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    raise ValueError("expected a string or a list of strings")


def _openai(body: Any) -> tuple[list[str], Any]:
    def shape(body: Any, vectors: np.ndarray) -> Any:
        size = body.get("dimensions") or OPENAI_NATIVE.get(body.get("model"), DIMENSIONS)
        if size <= DIMENSIONS:
            vectors = vectors[:, :size]
            vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        else:
            vectors = np.pad(vectors, ((0, 0), (0, size - DIMENSIONS)))
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        return {"object": "list", "data": data, "model": body.get("model")}

    return _listed(body["input"]), shape


def _ollama_embed(body: Any) -> tuple[list[str], Any]:
    return _listed(body["input"]), lambda body, v: {"model": body["model"], "embeddings": v.tolist()}


def _ollama_embeddings(body: Any) -> tuple[list[str], Any]:
    if not isinstance(body["prompt"], str):
        raise ValueError("`prompt` must be a string")
    return [body["prompt"]], lambda body, v: {"embedding": v[0].tolist()}


def _rest(body: Any) -> tuple[list[str], Any]:
    if "texts" in body:
        return _listed(body["texts"]), lambda body, v: {"data": [{"embedding": row.tolist()} for row in v]}
    return _listed(body["input"]["text"]), lambda body, v: {"result": {"vector": v[0].tolist()}}


def _cohere_rerank(body: Any) -> tuple[list[str], Any]:
    """A bi-encoder reranker: documents ordered by the cosine of their vector with the query's."""
    if not isinstance(body["query"], str) or not isinstance(body["model"], str):
        raise ValueError("`query` and `model` must be strings")
    documents = _listed(body["documents"])

    def shape(body: Any, vectors: np.ndarray) -> Any:
        scores = vectors[1:] @ vectors[0]
        ranked = sorted(range(len(documents)), key=lambda i: -float(scores[i]))[: body.get("top_n")]
        results = [{"index": i, "relevance_score": round(float(scores[i]), 6)} for i in ranked]
        return {"id": "local", "results": results, "meta": {"billed_units": {"search_units": 1}}}

    return [body["query"], *documents], shape


_ROUTES = {
    "/v1/embeddings": _openai,
    "/api/embed": _ollama_embed,
    "/api/embeddings": _ollama_embeddings,
    "/rest": _rest,
    "/v2/rerank": _cohere_rerank,
}


def _handler(server: EmbeddingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {name.lower(): value for name, value in self.headers.items()}
            try:
                body = orjson.loads(raw)
            except orjson.JSONDecodeError:
                status, answer = 400, {"error": "body is not JSON"}
            else:
                status, answer = server._answer(self.path, body, headers)
            content = answer if isinstance(answer, bytes) else orjson.dumps(answer)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def running_server() -> Iterator[EmbeddingServer]:
    """A fixture body: one server for a test module, its knobs reset by ``EmbeddingServer.reset``."""
    with EmbeddingServer() as server:
        yield server
