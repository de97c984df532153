"""``python -m bench.run vectors``: the shard's vector store (``shard/vector``) on synthetic vectors.

Data: ``--count`` (100k) 384-d vectors, clustered (1,000 Gaussian centres, each point its centre plus
Gaussian noise of ``--noise`` times their spread, a third by default, 2 for weakly clustered data;
normalised), from a fixed seed; queries are further points drawn the same way. Measured in-process
on one ``Space`` (what one shard holds for one embedder):

- build time (rows in, then the HNSW graph built), and bytes per stored vector in LMDB
  (the ``vectors`` table's pages over the count) and in the checkpoint file;
- ``nearest`` latency p50/p99 at 1 and 16 threads, exact and approximate, with every document allowed
  and with a random 10% allowed (a filter), and recall@10 of each against exact search;
- exact search latency by space size, which places ``APPROXIMATE_FROM``.

Then userProvided ingestion through a real cluster: ``--ingest`` documents with 384-d vectors in
batches of 1,000, documents per second from the first task's enqueue to the last task's end.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from pyroaring import BitMap

from common.lmdb_sizes import environment_sizes
from shard.index.env import StoreEnv
from shard.vector import checkpoint
from shard.vector.space import APPROXIMATE_FROM, Space
from shard.vector.storage import Entry, SpaceRecord, encode_entry, entry_key
from tests.support.client import wait_task
from tests.support.cluster import RunningCluster

DIMENSIONS = 384
SEED = 20261127
CENTRES = 1000
TARGET_MS = 10.0
TARGET_RECALL = 0.95


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run vectors", description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000, help="vectors in the space")
    parser.add_argument("--queries", type=int, default=200, help="queries per measurement")
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement; medians are shown")
    parser.add_argument(
        "--ingest", type=int, default=10_000, help="documents ingested through a cluster (0: skip)"
    )
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument(
        "--noise",
        type=float,
        default=1 / 3,
        help="spread of points around their centre (2: weakly clustered)",
    )
    parser.add_argument("--json", type=Path, help="result file; default bench/results/vectors-<time>.json")
    return parser.parse_args(argv)


def clustered(count: int, rng: np.random.Generator, centres: np.ndarray, noise: float = 1 / 3) -> np.ndarray:
    """Points around random centres, noise ``noise`` times the centres' spread, normalised."""
    points = centres[rng.integers(0, len(centres), count)] + rng.normal(scale=noise, size=(count, DIMENSIONS))
    points = points.astype(np.float32)
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    return points


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    rng = np.random.default_rng(SEED)
    centres = rng.normal(size=(CENTRES, DIMENSIONS))
    data = clustered(args.count, rng, centres, args.noise)
    queries = clustered(args.queries, rng, centres, args.noise)
    allowed_all = BitMap(range(args.count))
    allowed_tenth = BitMap(rng.choice(args.count, args.count // 10, replace=False).tolist())
    report: dict[str, Any] = {
        "scenario": "vectors",
        "description": __doc__.splitlines()[0],
        "options": {**vars(args), "json": None, "seed": SEED, "dimensions": DIMENSIONS},
        "environment": environment,
    }
    print("building ...", file=sys.stderr, flush=True)
    space, build = _build(data)
    report["build"] = build
    report["storage"] = _storage(data, space)
    exact = _exact_answers(data, queries, {"all": allowed_all, "10%": allowed_tenth})
    rows = []
    for mode in ("exact", "approximate"):
        for name, allowed in (("all", allowed_all), ("10%", allowed_tenth)):
            for threads in (1, 16):
                print(f"{mode} {name} {threads} threads ...", file=sys.stderr, flush=True)
                searched = space if mode == "approximate" else _without_ann(space)
                figures = [_latency(searched, queries, allowed, threads) for _ in range(args.runs)]
                recall = _recall(searched, queries, allowed, exact[name])
                rows.append(
                    {
                        "mode": mode,
                        "allowed": name,
                        "threads": threads,
                        "p50_ms": statistics.median(f[0] for f in figures),
                        "p99_ms": statistics.median(f[1] for f in figures),
                        "recall_at_10": recall,
                    }
                )
    report["search"] = rows
    report["exact_by_size"] = _exact_by_size(data, queries, args.runs)
    if args.ingest:
        print("ingesting through a cluster ...", file=sys.stderr, flush=True)
        report["ingest"] = _ingest(args.ingest, args.shards, rng, centres)
    return report


def _build(data: np.ndarray) -> tuple[Space, dict[str, float]]:
    """The space as a shard rebuilds it from LMDB: one ``put`` per document, then ``settle``."""
    space = Space(DIMENSIONS, binary=False)
    started = time.perf_counter()
    for doc_id, row in enumerate(data):
        space.put(doc_id, Entry(row.reshape(1, -1), True))
    rows_s = time.perf_counter() - started
    started = time.perf_counter()
    space.settle()  # past APPROXIMATE_FROM: builds the HNSW graph, in the background
    assert space.wait_for_graph() and space.ann is not None
    graph_s = time.perf_counter() - started
    held = space.rows[: space.used].nbytes + space.owners[: space.used].nbytes + len(space.ann.serialize())
    return space, {"rows_s": rows_s, "graph_s": graph_s, "memory_bytes_per_vector": held / len(data)}


def _storage(data: np.ndarray, space: Space) -> dict[str, float]:
    """Bytes per vector in LMDB (pages of the ``vectors`` table) and in the checkpoint file."""
    with tempfile.TemporaryDirectory(prefix="sift-bench-vectors-") as tmp:
        env = StoreEnv(Path(tmp) / "lmdb")
        with env.lmdb.begin(write=True) as txn:
            for doc_id, row in enumerate(data):
                entry = Entry(row.reshape(1, -1), True)
                txn.put(entry_key(0, "e", doc_id), encode_entry(entry, False), db=env.vectors, append=True)
        used = environment_sizes(env.lmdb, (env.vectors,))["usedDatabaseSize"]
        env.close()
        record = SpaceRecord(1, 1, DIMENSIONS)
        started = time.perf_counter()
        checkpoint.write(Path(tmp) / "ckpt", (0, "e"), space, record.base, 1)
        written_s = time.perf_counter() - started
        size = checkpoint.path_for(Path(tmp) / "ckpt", (0, "e")).stat().st_size
        started = time.perf_counter()
        loaded = checkpoint.read(Path(tmp) / "ckpt", (0, "e"), record)
        read_s = time.perf_counter() - started
        assert loaded is not None
    return {
        "lmdb_bytes_per_vector": used / len(data),
        "checkpoint_bytes_per_vector": size / len(data),
        "checkpoint_write_s": written_s,
        "checkpoint_read_s": read_s,
    }


def _latency(space: Space, queries: np.ndarray, allowed: BitMap, threads: int) -> tuple[float, float]:
    """p50 and p99 in ms of ``nearest`` with ``threads`` threads each running every query."""
    durations: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        mine = []
        for query in queries:
            started = time.perf_counter()
            _search_shared(space, query, allowed)
            mine.append(time.perf_counter() - started)
        with lock:
            durations.extend(mine)

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    durations.sort()
    return 1000 * durations[len(durations) // 2], 1000 * durations[int(len(durations) * 0.99)]


def _search_shared(space: Space, query: np.ndarray, allowed: BitMap) -> list[tuple[int, float]]:
    """As ``shard.vector.nearest`` does: under the space's read lock."""
    with space.lock.reading():
        return space.nearest(query, 10, allowed)


def _without_ann(space: Space) -> Space:
    """The same rows, searched exactly (a shallow copy without the HNSW graph)."""
    exact = copy.copy(space)
    exact.ann = None
    return exact


def _exact_answers(
    data: np.ndarray, queries: np.ndarray, filters: dict[str, BitMap]
) -> dict[str, list[set[int]]]:
    answers: dict[str, list[set[int]]] = {}
    for name, allowed in filters.items():
        ids = np.array(allowed.to_array(), dtype=np.int64)
        scores = queries @ data[ids].T
        top = np.argsort(-scores, axis=1)[:, :10]
        answers[name] = [set(ids[row].tolist()) for row in top]
    return answers


def _recall(space: Space, queries: np.ndarray, allowed: BitMap, truth: list[set[int]]) -> float:
    found = [{doc for doc, _ in _search_shared(space, query, allowed)} for query in queries]
    return sum(len(f & t) for f, t in zip(found, truth, strict=True)) / (10 * len(queries))


def _exact_by_size(data: np.ndarray, queries: np.ndarray, runs: int) -> list[dict[str, float]]:
    rows = []
    for size in (5_000, 10_000, 20_000, 50_000, len(data)):
        if size > len(data):
            continue
        space = Space(DIMENSIONS, binary=False)
        for doc_id, row in enumerate(data[:size]):
            space.put(doc_id, Entry(row.reshape(1, -1), True))
        allowed = BitMap(range(size))
        figures = [_latency(space, queries[:100], allowed, 1) for _ in range(runs)]
        rows.append({"size": size, "p50_ms": statistics.median(f[0] for f in figures)})
    return rows


def _ingest(count: int, shards: int, rng: np.random.Generator, centres: np.ndarray) -> dict[str, float]:
    vectors = clustered(count, rng, centres)
    docs = [{"id": i, "title": f"document {i}", "_vectors": {"e": vectors[i].tolist()}} for i in range(count)]
    with RunningCluster(shards=shards) as cluster:
        settings = {"embedders": {"e": {"source": "userProvided", "dimensions": DIMENSIONS}}}
        task = httpx.patch(f"{cluster.url}/indexes/bench/settings", json=settings).json()
        wait_task(cluster, task["taskUid"], timeout=120)
        uids = []
        started = time.perf_counter()
        for start in range(0, count, 1000):
            response = httpx.post(
                f"{cluster.url}/indexes/bench/documents", json=docs[start : start + 1000], timeout=120
            )
            uids.append(response.json()["taskUid"])
        for uid in uids:
            assert wait_task(cluster, uid, timeout=600)["status"] == "succeeded"
        elapsed = time.perf_counter() - started
        stats = httpx.get(f"{cluster.url}/indexes/bench/stats").json()
        assert stats["numberOfEmbeddings"] == count
    return {"documents": count, "seconds": elapsed, "docs_per_s": count / elapsed}


def render(report: dict[str, Any]) -> str:
    options = report["options"]
    lines = [
        f"{report['scenario']}: {report['description']}",
        f"count={options['count']} dimensions={DIMENSIONS} queries={options['queries']}"
        f" runs={options['runs']}"
        f" seed={SEED} noise={options['noise']:.2f} (clustered synthetic, normalised)"
        f" | python {report['environment']['python']},"
        f" {report['environment']['cpus']} CPUs, commit {report['environment']['commit']}",
        "",
        f"build: rows {report['build']['rows_s']:.2f} s, HNSW graph {report['build']['graph_s']:.2f} s;"
        f" {report['build']['memory_bytes_per_vector']:.0f} B/vector in memory (rows, owners, graph)",
        "storage: {lmdb_bytes_per_vector:.0f} B/vector in LMDB, {checkpoint_bytes_per_vector:.0f} B/vector in"
        " the checkpoint (written in {checkpoint_write_s:.2f} s, read in {checkpoint_read_s:.2f} s)".format(
            **report["storage"]
        ),
        "",
        f"{'mode':<12} {'allowed':>7} {'threads':>7} {'p50 ms':>8} {'p99 ms':>8} {'recall@10':>9}",
    ]
    for row in report["search"]:
        lines.append(
            f"{row['mode']:<12} {row['allowed']:>7} {row['threads']:>7} {row['p50_ms']:>8.2f}"
            f" {row['p99_ms']:>8.2f} {row['recall_at_10']:>9.3f}"
        )
    lines += [
        "",
        "exact search p50 by size (1 thread): "
        + ", ".join(f"{row['size']}: {row['p50_ms']:.2f} ms" for row in report["exact_by_size"]),
        f"(APPROXIMATE_FROM = {APPROXIMATE_FROM}; target p50 <= {TARGET_MS} ms,"
        f" recall@10 >= {TARGET_RECALL})",
    ]
    if "ingest" in report:
        ingest = report["ingest"]
        lines.append(
            f"ingestion (userProvided, {DIMENSIONS}-d, batches of 1000, {options['shards']} shards):"
            f" {ingest['documents']} docs in {ingest['seconds']:.1f} s = {ingest['docs_per_s']:.0f} docs/s"
        )
    return "\n".join(lines)
