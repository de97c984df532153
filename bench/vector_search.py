"""``python -m bench.run vector-search``: semantic and hybrid search latency on ``movies``, beside the
reference engine (search.md §7.6).

Each movie gets the local all-MiniLM-L6-v2 embedding of its title and overview (their first 400
characters, computed once here, kept under ``bench/results/``), given as ``userProvided`` vectors to
both engines: the reference
(``--reference``, by default the one at :7800, in an index of its own) and a fresh Sift cluster, so
both search the same vectors, in the same run. Query texts are drawn as ``bench.run search``'s
``exact`` class; their vectors come from the same model, sent with each request:

- ``keyword``: the text alone (a baseline);
- ``semantic``: ``vector`` with ``semanticRatio`` 1 (nearest neighbours only);
- ``hybrid``: text and ``vector``, ``semanticRatio`` 0.5 (both legs, fused).

Every class runs at each concurrency on one engine then the other, runs interleaved; the table gives
the medians and each class's Sift / reference latency ratio.

Measured at 27fe740 (2 shards, 3 runs of 8 s, load avg ~11): semantic p50 3.27 ms (1.25 x the
reference's), p99 8.86 ms (0.74 x); at 16 clients p50 39.9 ms (1.50 x), p99 77.4 ms (0.72 x), 383
against 516 req/s; hybrid p50 7.14 ms (2.15 x), 127 ms at 16 clients (3.59 x), the keyword leg's
cost (keyword alone: 5.24 ms, 3.21 x). First pages equal to the reference's: semantic 20 of 20,
hybrid 18 of 20, keyword 17 of 20.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np

from bench import queries
from bench.datasets import DATASETS, TaskFailed, add_documents, wait_for_task
from bench.loadgen import REPO_ROOT, LoadSpec
from bench.procstat import cluster_processes
from bench.report import summarize_level
from bench.run import measure
from bench.search import corpus, post_requests
from tests.support.cluster import RunningCluster

DATASET = "movies"
EMBEDDER = "minilm"
CLASSES = ("keyword", "semantic", "hybrid")
REFERENCE_URL = "http://127.0.0.1:7800"
REFERENCE_INDEX = "vec-search-movies"
VECTORS_FILE = REPO_ROOT / "bench" / "results" / "movies-minilm.npy"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run vector-search", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--concurrency", type=lambda text: [int(p) for p in text.split(",")], default=[1, 16])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured per run and level")
    parser.add_argument("--runs", type=int, default=3, help="runs per class, engine and level; medians shown")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--queries", type=int, default=100, help="distinct requests per class")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--reference", default=REFERENCE_URL, help="the reference engine's URL")
    parser.add_argument(
        "--json", type=Path, help="result file; default bench/results/vector-search-<time>.json"
    )
    return parser.parse_args(argv)


def movie_vectors() -> tuple[list[dict[str, Any]], np.ndarray]:
    """The movies and their MiniLM embeddings (title, then overview), computed once and kept."""
    from shard.embedding import embedder_for

    documents = list(DATASETS[DATASET].documents())
    if VECTORS_FILE.exists():
        vectors = np.load(VECTORS_FILE)
        if len(vectors) == len(documents):
            return documents, vectors
    print(f"embedding {len(documents)} movies with the local MiniLM ...", file=sys.stderr, flush=True)
    model = embedder_for(_MINILM)
    # The first 400 bytes, as the default documentTemplateMaxBytes cuts them (and fast to embed).
    texts = [f"{doc.get('title', '')}: {doc.get('overview', '')}"[:400] for doc in documents]
    vectors = np.concatenate([model.embed_documents(texts[i : i + 64]) for i in range(0, len(texts), 64)])
    VECTORS_FILE.parent.mkdir(parents=True, exist_ok=True)
    np.save(VECTORS_FILE, vectors)
    return documents, vectors


_MINILM = {"source": "huggingFace", "model": "sentence-transformers/all-MiniLM-L6-v2", "pooling": "useModel"}


def load(url: str, index: str, documents: list[dict[str, Any]], vectors: np.ndarray) -> float:
    """``index`` recreated on the engine at ``url`` with the userProvided embedder and the documents."""
    started = time.monotonic()
    settings = {"embedders": {EMBEDDER: {"source": "userProvided", "dimensions": int(vectors.shape[1])}}}
    with httpx.Client(base_url=url, timeout=600.0) as client:
        deleted = client.delete(f"/indexes/{index}")
        if deleted.status_code == 202:
            with contextlib.suppress(TaskFailed):  # there was no such index
                wait_for_task(client, int(deleted.json()["taskUid"]), time.monotonic() + 600)
        created = client.post("/indexes", json={"uid": index, "primaryKey": "id"}).json()
        wait_for_task(client, int(created["taskUid"]), time.monotonic() + 600)
        task = client.patch(f"/indexes/{index}/settings", json=settings).json()["taskUid"]
        wait_for_task(client, int(task), time.monotonic() + 600)
    with_vectors = (
        {**doc, "_vectors": {EMBEDDER: vector.tolist()}}
        for doc, vector in zip(documents, vectors, strict=True)
    )
    add_documents(url, index, with_vectors, "id", chunk_size=500)
    return round(time.monotonic() - started, 2)


def request_sets(args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    """The bodies of each class: the same texts and vectors for every class and engine."""
    from shard.embedding import embedder_for

    texts = [
        body["q"]
        for body in queries.build(corpus(DATASET, None, args.seed), args.seed, args.queries)["exact"]
    ]
    model = embedder_for(_MINILM)
    vectors = [[round(float(x), 7) for x in model.embed_query(text)] for text in texts]
    semantic = {"embedder": EMBEDDER, "semanticRatio": 1.0}
    hybrid = {"embedder": EMBEDDER, "semanticRatio": 0.5}
    return {
        "keyword": [{"q": text} for text in texts],
        "semantic": [{"vector": vector, "hybrid": semantic} for vector in vectors],
        "hybrid": [
            {"q": text, "vector": vector, "hybrid": hybrid}
            for text, vector in zip(texts, vectors, strict=True)
        ],
    }


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    documents, vectors = movie_vectors()
    sets = request_sets(args)
    levels: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    with RunningCluster(shards=args.shards) as cluster:
        assert cluster.process is not None
        print("loading movies with vectors into both engines ...", file=sys.stderr, flush=True)
        loaded = {"sift_s": load(cluster.url, DATASET, documents, vectors)}
        loaded["reference_s"] = load(args.reference, REFERENCE_INDEX, documents, vectors)
        engines = {
            "sift": (cluster.url, post_requests(sets, lambda _: f"/indexes/{DATASET}/search")),
            "reference": (
                args.reference,
                post_requests(sets, lambda _: f"/indexes/{REFERENCE_INDEX}/search"),
            ),
        }
        probes = {engine: _probe(url, sets, index) for engine, (url, _), index in _indexes(engines)}
        for run in range(1, args.runs + 1):
            for name in CLASSES:
                for engine, (url, requests) in engines.items():
                    address = urlsplit(url)
                    assert address.hostname is not None and address.port is not None
                    for c in args.concurrency:
                        print(
                            f"run {run}/{args.runs}, {name}, {engine}, {c} clients ...",
                            file=sys.stderr,
                            flush=True,
                        )
                        spec = LoadSpec(
                            address.hostname, address.port, c, args.warmup, args.duration, requests[name]
                        )
                        pids = cluster_processes(cluster.process.pid) if engine == "sift" else {}
                        levels.setdefault((name, engine, c), []).append(measure(spec, pids))
    classes = [
        {
            "class": name,
            "engines": {
                engine: [summarize_level(c, levels[name, engine, c]) for c in args.concurrency]
                for engine in engines
            },
        }
        for name in CLASSES
    ]
    return {
        "scenario": "vector-search",
        "description": "semantic and hybrid search on movies with MiniLM vectors, Sift beside the reference",
        "started_at": started_at,
        "options": {
            key: getattr(args, key)
            for key in ("shards", "concurrency", "duration", "runs", "warmup", "queries", "seed", "reference")
        },
        "environment": environment,
        "loaded": {**loaded, "documents": len(documents), "dimensions": int(vectors.shape[1])},
        "probes": probes,
        "classes": classes,
    }


def _indexes(engines: dict[str, Any]) -> list[tuple[str, Any, str]]:
    return [
        (engine, value, DATASET if engine == "sift" else REFERENCE_INDEX) for engine, value in engines.items()
    ]


def _probe(url: str, sets: dict[str, list[dict[str, Any]]], index: str) -> dict[str, Any]:
    """Each class's first requests once: the hits both engines find (the first page's ids)."""
    pages: dict[str, list[list[Any]]] = {}
    with httpx.Client(base_url=url, timeout=60.0) as client:
        for name, bodies in sets.items():
            pages[name] = []
            for body in bodies[:20]:
                response = client.post(
                    f"/indexes/{index}/search", json={**body, "attributesToRetrieve": ["id"]}
                )
                response.raise_for_status()
                pages[name].append([hit["id"] for hit in response.json()["hits"]])
    return pages


def render(report: dict[str, Any]) -> str:
    options, env, loaded = report["options"], report["environment"], report["loaded"]
    lines = [
        f"{report['scenario']}: {report['description']}",
        f"{loaded['documents']} movies, {loaded['dimensions']}-d vectors, loaded in {loaded['sift_s']} s"
        f" (Sift) / {loaded['reference_s']} s (reference) | shards={options['shards']} runs={options['runs']}"
        f" duration={options['duration']}s warmup={options['warmup']}s",
        f"python {env['python']}, {env['cpus']} CPUs, commit {env['commit']},"
        f" load avg {env['loadavg_before']:.2f}",
        "",
    ]
    sift, reference = report["probes"]["sift"], report["probes"]["reference"]
    for name in CLASSES:
        same = sum(a == b for a, b in zip(sift[name], reference[name], strict=True))
        lines.append(
            f"{name}: first pages equal to the reference's on {same} of {len(sift[name])} probed requests"
        )
    lines += [
        "",
        f"{'class':<9} {'clients':>7} {'engine':<10} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}"
        f" {'p50 ratio':>9} {'p99 ratio':>9}",
    ]
    for entry in report["classes"]:
        sift_levels, reference_levels = entry["engines"]["sift"], entry["engines"]["reference"]
        for ours, theirs in zip(sift_levels, reference_levels, strict=True):
            for engine, level in (("sift", ours), ("reference", theirs)):
                median = level["median"]
                ratios = ""
                if engine == "sift":
                    p50 = median["p50_ms"] / theirs["median"]["p50_ms"]
                    p99 = median["p99_ms"] / theirs["median"]["p99_ms"]
                    ratios = f" {p50:>9.2f} {p99:>9.2f}"
                lines.append(
                    f"{entry['class']:<9} {level['concurrency']:>7} {engine:<10} {median['rps']:>8.1f}"
                    f" {median['p50_ms']:>8.2f} {median['p99_ms']:>8.2f}{ratios}"
                )
    lines.append("ratio: Sift's latency / the reference's (below 1: Sift faster)")
    return "\n".join(lines)
