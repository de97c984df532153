"""``python -m bench.run relevance-fusion``: ways of fusing bm25 and MiniLM on Cranfield, offline.

Each query's two legs are fetched once from the engine, with their scores (``matchingStrategy:
"bm25"`` alone, and the vector leg alone, ``semanticRatio`` 1), ``--depth`` hits deep; each fusion is
then computed here on the same legs, for each depth the legs are cut at and each ``semanticRatio``:

- ``sum``: ``(1 - ratio) * bm25 score + ratio * similarity``, 0 for a leg that did not find the
  document: how the engine adds the legs under bm25 (``gateway/search/hybrid.py`` ``fuse_scores``);
- ``min-max``: each leg's scores mapped to 0..1 over its own hits of the query, then summed;
- ``z-score``: each leg's scores centred and divided by their spread over the query's hits;
- ``max-scaled``: bm25's raw odds ``s / (1 - s)`` and the cosine ``2s - 1``, each divided by its
  query's best (the scales before bm25's saturation and the similarity's ``(1 + cos) / 2``);
- ``rrf``: reciprocal-rank fusion, ``weight / (60 + rank)``, scores ignored;
- ``prf kK bB``: ``sum`` with a vector leg searched again with the query's vector plus B times the mean
  of bm25's first K documents' vectors (pseudo-relevance feedback); the engine does ``prf k3 b1``
  under bm25 (``gateway/search/feedback.py``), the other rows are the engine without it.

A cut at 10 is what a page of 10 fused before the engine took ``FUSION_DEPTH`` hits per leg. The
index is the relevance bench's (``--data-dir`` reuses one it loaded and embedded).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from bench import relevance, relevance_vectors
from bench.relevance_metrics import evaluate
from tests.support.cluster import RunningCluster

Leg = list[tuple[str, float]]
Scale = Callable[[list[float]], list[float]]
RRF_K = 60
FEEDBACK = [(1, 1.0), (2, 1.0), (3, 1.0), (3, 0.5), (3, 2.0)]
"""(bm25 documents k, weight beta) of the feedback rows."""
RECALL = relevance.RECALL_DEPTH


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run relevance-fusion", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--data-dir", type=Path, help="the relevance bench's data (loaded and embedded once)")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--depth", type=int, default=200, help="hits fetched per leg and query")
    parser.add_argument("--cuts", type=relevance_vectors.limits, default=[10, 20, 50, 100, 200])
    parser.add_argument("--semantic-ratios", type=relevance_vectors.ratios, default=[0.3, 0.5, 0.7])
    parser.add_argument(
        "--json", type=Path, help="result file; default bench/results/relevance-fusion-<time>.json"
    )
    return parser.parse_args(argv)


def fetch_legs(client: httpx.Client, queries: list[tuple[str, str]], depth: int) -> dict[str, dict[str, Leg]]:
    """Each query's bm25 leg and vector leg: (document id, score), best first."""
    legs: dict[str, dict[str, Leg]] = {}
    kinds: dict[str, dict[str, Any]] = {
        "keyword": {"matchingStrategy": "bm25"},
        "vector": {"hybrid": {"embedder": relevance_vectors.EMBEDDER, "semanticRatio": 1.0}},
    }
    for qid, text in queries:
        legs[qid] = {}
        for kind, params in kinds.items():
            body = {"q": text, "limit": depth, "showRankingScore": True, **params}
            answer = relevance.search(client, qid, body)
            legs[qid][kind] = [(str(hit["_id"]), float(hit["_rankingScore"])) for hit in answer["hits"]]
    return legs


def add_feedback_legs(
    client: httpx.Client, queries: list[tuple[str, str]], legs: dict[str, dict[str, Leg]], depth: int
) -> None:
    """For each ``FEEDBACK`` (k, beta), a vector leg searched with the query's vector plus beta times the
    mean vector of bm25's first k documents (Rocchio's pseudo-relevance feedback, dense side), normalised."""
    embedder = relevance_vectors.EMBEDDER
    hybrid = {"embedder": embedder, "semanticRatio": 1.0}
    deepest = max(k for k, _ in FEEDBACK)
    for qid, text in queries:
        query = relevance.search(
            client, qid, {"q": text, "limit": 1, "hybrid": hybrid, "retrieveVectors": True}
        )
        best = relevance.search(
            client, qid, {"q": text, "limit": deepest, "matchingStrategy": "bm25", "retrieveVectors": True}
        )
        vectors = np.array([hit["_vectors"][embedder]["embeddings"][0] for hit in best["hits"]])
        for k, beta in FEEDBACK:
            refined = np.asarray(query["queryVector"]) + beta * vectors[:k].mean(axis=0)
            body = {"vector": (refined / np.linalg.norm(refined)).tolist(), "hybrid": hybrid, "limit": depth}
            answer = relevance.search(client, qid, {**body, "showRankingScore": True})
            legs[qid][_feedback(k, beta)] = [
                (str(hit["_id"]), hit["_rankingScore"]) for hit in answer["hits"]
            ]


def _feedback(k: int, beta: float) -> str:
    return f"prf k{k} b{beta:g}"


def _same(scores: list[float]) -> list[float]:
    return scores


def _min_max(scores: list[float]) -> list[float]:
    low, high = min(scores, default=0.0), max(scores, default=0.0)
    return [(score - low) / (high - low) if high > low else 1.0 for score in scores]


def _z_score(scores: list[float]) -> list[float]:
    if len(scores) < 2:
        return [1.0] * len(scores)
    mean, spread = statistics.fmean(scores), statistics.pstdev(scores) or 1.0
    return [(score - mean) / spread for score in scores]


def _by_best(scores: list[float]) -> list[float]:
    best = max(scores, default=1.0) or 1.0
    return [score / best for score in scores]


def _odds(scores: list[float]) -> list[float]:
    return _by_best([score / (1.0 - score) if score < 1.0 else 1e9 for score in scores])


def _cosine(scores: list[float]) -> list[float]:
    return _by_best([2.0 * score - 1.0 for score in scores])


SCALED: dict[str, tuple[Scale, Scale]] = {
    "sum": (_same, _same),
    "min-max": (_min_max, _min_max),
    "z-score": (_z_score, _z_score),
    "max-scaled": (_odds, _cosine),
}


def fuse(keyword: Leg, vector: Leg, ratio: float, method: str) -> list[str]:
    """The two legs fused by ``method``, best first (ties by document id)."""
    totals: dict[str, float] = {}
    keyword_scale, vector_scale = SCALED.get(method, (_same, _same))
    for leg, weight, scale in ((keyword, 1.0 - ratio, keyword_scale), (vector, ratio, vector_scale)):
        if method == "rrf":
            values = [1.0 / (RRF_K + rank) for rank in range(1, len(leg) + 1)]
        else:
            values = scale([score for _, score in leg])
        for (doc, _), value in zip(leg, values, strict=True):
            totals[doc] = totals.get(doc, 0.0) + weight * value
    return sorted(totals, key=lambda doc: (-totals[doc], doc))


def table(
    legs: dict[str, dict[str, Leg]], cuts: Sequence[int], ratios: Sequence[float]
) -> list[dict[str, Any]]:
    qrels = relevance.load_qrels()
    rows = []
    runs = [(method, method, "vector") for method in (*SCALED, "rrf")]
    runs += [(_feedback(k, beta), "sum", _feedback(k, beta)) for k, beta in FEEDBACK]
    for label, method, vector in runs:
        for ratio in ratios:
            for cut in cuts:
                rankings = {
                    qid: fuse(leg["keyword"][:cut], leg[vector][:cut], ratio, method)[:RECALL]
                    for qid, leg in legs.items()
                }
                ndcg = evaluate(rankings, qrels)["ndcg"]
                recall = evaluate(rankings, qrels, RECALL)["recall"]
                rows.append({"method": label, "ratio": ratio, "cut": cut, "ndcg": ndcg, "recall": recall})
    for kind in ("keyword", "vector", *(_feedback(k, beta) for k, beta in FEEDBACK)):
        alone = {qid: [doc for doc, _ in leg[kind]][:RECALL] for qid, leg in legs.items()}
        rows.append(
            {
                "method": f"{kind} alone",
                "ratio": None,
                "cut": None,
                "ndcg": evaluate(alone, qrels)["ndcg"],
                "recall": evaluate(alone, qrels, RECALL)["recall"],
            }
        )
    return rows


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    queries = relevance.load_queries()
    settings = {**relevance.index_settings("smart"), **relevance_vectors.embedder_settings()}
    cluster = RunningCluster(*relevance_vectors.CLUSTER_OPTIONS, shards=args.shards, data_dir=args.data_dir)
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    with (
        relevance.started(cluster) as running,
        httpx.Client(base_url=running.url, timeout=600.0) as client,
    ):
        print("loading cranfield ...", file=sys.stderr, flush=True)
        relevance.prepare(client, settings)
        print("fetching the legs ...", file=sys.stderr, flush=True)
        legs = fetch_legs(client, queries, args.depth)
        print("feedback legs ...", file=sys.stderr, flush=True)
        add_feedback_legs(client, queries, legs, args.depth)
    return {
        "scenario": "relevance-fusion",
        "started_at": started_at,
        "options": {
            "shards": args.shards,
            "depth": args.depth,
            "cuts": args.cuts,
            "ratios": args.semantic_ratios,
        },
        "environment": environment,
        "rows": table(legs, args.cuts, args.semantic_ratios),
    }


def render(report: dict[str, Any]) -> str:
    options, env = report["options"], report["environment"]
    cuts = options["cuts"]
    lines = [
        "relevance-fusion: Cranfield nDCG@10 / recall@100 of bm25 and MiniLM fused offline",
        f"shards={options['shards']} | legs fetched {options['depth']} deep | commit {env['commit']}, "
        f"load avg {env['loadavg_before']:.2f} before start",
        "",
        f"{'method':<14} {'ratio':>5} " + " ".join(f"{f'legs cut at {cut}':>16}" for cut in cuts),
    ]
    cells: dict[tuple[str, float], dict[int, dict[str, Any]]] = {}
    for row in report["rows"]:
        if row["cut"] is None:
            continue
        cells.setdefault((row["method"], row["ratio"]), {})[row["cut"]] = row
    for (method, ratio), by_cut in cells.items():
        values = " ".join(
            f"{by_cut[cut]['ndcg']:.4f} / {by_cut[cut]['recall']:.4f}".rjust(16) for cut in cuts
        )
        lines.append(f"{method:<14} {ratio:>5g} {values}")
    lines.append("")
    for row in report["rows"]:
        if row["cut"] is None:
            lines.append(f"{row['method']}: {row['ndcg']:.4f} / {row['recall']:.4f}")
    return "\n".join(lines)
