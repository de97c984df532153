"""``python -m bench.run relevance``: ranking quality on Cranfield, per matching strategy.

Latency figures say nothing about whether the right documents come first; Cranfield (1,400
aerodynamics abstracts, 225 queries with graded judgments, BEIR layout) gives a number that moves
with ranking changes and can be set beside published reference points (``shared/api/README.md``:
BM25 with Porter stemming 0.367 nDCG@10).

The metrics follow BEIR's (``relevance_metrics.py``), so that the figures compare with those references.

The index gets the settings a user would give an English scientific corpus: ``searchableAttributes``
title then text, and the SMART English stop-word list (``--stop-words none`` measures without it).
Cranfield queries are questions ("what similarity laws must be obeyed when ..."): without stop words
their first terms and the terms every hit must contain are words like "what", "are" or "the".

``bm25`` is Sift's opt-in scoring (``shard/query/ranking/bm25.py``); the ``bench BM25`` row is a plain
BM25 the bench computes itself on the same tokens, without any server (``relevance_bm25.py``).
nDCG and MRR look at the first 10 hits, recall at the first 100.

``--modes vector,hybrid`` adds MiniLM's vector-only and hybrid figures (``relevance_vectors.py``).

Beside the engine's figures, each strategy gets the best nDCG@10 its ``words`` rule leaves room for.
Every candidate of a query is fetched with its ``words`` bucket; the bound keeps the buckets in order
and sorts each one by judged grade, as if every later rule (and the tie order) were perfect. No
ranking rule after ``words`` can beat it; only which documents qualify, and their buckets, limit it.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench import datasets, relevance_bm25, relevance_vectors
from bench.relevance_metrics import K, Qrels, evaluate
from bench.stop_words import SMART_STOP_WORDS
from tests.support.cluster import RunningCluster

INDEX = "cranfield"
CRANFIELD_DIR = datasets.DATASETS_DIR / "cranfield"
STRATEGIES = ("last", "all", "frequency", "bm25")
# The contract keeps only the first 10 query terms (search.md §1.1); most Cranfield queries are longer.
QUERY_TERM_LIMIT = 10
START_TIMEOUT_S = 600
RECALL_DEPTH = 100
"""Hits fetched per query: nDCG and MRR look at the first ``K``, recall at all of them."""
# Above the corpus size, so that the bound's pass sees every candidate; the first 10 hits are unchanged.
MAX_TOTAL_HITS = 2000
# nDCG@10 on the same files, from shared/api/README.md.
REFERENCES = {"BM25 + Porter": 0.367, "MiniLM-L6 dense": 0.382, "hybrid (0.7 dense)": 0.421}
_WORD = re.compile(r"\w+")
SEARCHABLE_ATTRIBUTES = ["title", "text"]
STOP_WORD_LISTS: dict[str, frozenset[str]] = {"smart": SMART_STOP_WORDS, "none": frozenset()}


def load_queries() -> list[tuple[str, str]]:
    """(query id, text) in file order."""
    with open(CRANFIELD_DIR / "queries.jsonl", "rb") as lines:
        queries = [orjson.loads(line) for line in lines if line.strip()]
    return [(str(query["_id"]), str(query["text"])) for query in queries]


def load_qrels() -> Qrels:
    """``qrels/test.tsv`` (header ``query-id corpus-id score``) as query -> document -> grade."""
    qrels: Qrels = {}
    with open(CRANFIELD_DIR / "qrels" / "test.tsv") as lines:
        next(lines)
        for line in lines:
            if line.strip():
                qid, doc, grade = line.split("\t")
                qrels.setdefault(qid, {})[doc] = int(grade)
    return qrels


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run relevance", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--strategies",
        type=_strategies,
        default=list(STRATEGIES),
        help="matchingStrategy values, comma-separated (last,all,frequency)",
    )
    parser.add_argument(
        "--stop-words",
        choices=sorted(STOP_WORD_LISTS),
        default="smart",
        help="the index's stopWords: the SMART English list (default) or none",
    )
    parser.add_argument(
        "--settings",
        type=_settings_object,
        default={},
        help='more index settings as a JSON object, e.g. \'{"rankingRules": ["words", "proximity"]}\'',
    )
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--json", type=Path, help="result file; default bench/results/relevance-<time>.json")
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="keep the cluster's data here; a loaded corpus is reused (same settings)",
    )
    relevance_vectors.add_arguments(parser)
    return parser.parse_args(argv)


def _settings_object(text: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object of index settings")
    return value


def _strategies(text: str) -> list[str]:
    values = [part.strip() for part in text.split(",") if part.strip()]
    if not values or any(value not in STRATEGIES for value in values):
        raise argparse.ArgumentTypeError(f"expected a comma-separated subset of {','.join(STRATEGIES)}")
    return values


def index_settings(stop_words: str) -> dict[str, Any]:
    """The settings the index is given before the corpus is loaded."""
    return {
        "searchableAttributes": SEARCHABLE_ATTRIBUTES,
        "stopWords": sorted(STOP_WORD_LISTS[stop_words]),
        "pagination": {"maxTotalHits": MAX_TOTAL_HITS},
    }


def prepare(client: httpx.Client, settings: dict[str, Any]) -> float:
    """Create the index with its primary key and settings, load the corpus; seconds taken. An index
    already holding the corpus with these settings (``--data-dir``) is kept: 0 seconds."""
    if _loaded(client, settings):
        return 0.0
    started = time.monotonic()
    deadline = started + 600.0
    for method, path, body in (
        ("POST", "/indexes", {"uid": INDEX, "primaryKey": "_id"}),
        ("PATCH", f"/indexes/{INDEX}/settings", settings),
    ):
        response = client.request(method, path, json=body)
        response.raise_for_status()
        datasets.wait_for_task(client, int(response.json()["taskUid"]), deadline)
    documents = datasets.DATASETS["cranfield"].documents()
    # Embedding the abstracts with the local model takes minutes on a busy 2-core machine.
    datasets.add_documents(str(client.base_url), INDEX, documents, "_id", timeout=7200.0)
    return time.monotonic() - started


def _loaded(client: httpx.Client, settings: dict[str, Any]) -> bool:
    stats = client.get(f"/indexes/{INDEX}/stats")
    if stats.status_code != 200 or stats.json()["numberOfDocuments"] != 1400:
        return False
    current = client.get(f"/indexes/{INDEX}/settings").json()
    return all(current.get(name) == value for name, value in settings.items() if name != "embedders") and set(
        current.get("embedders") or {}
    ) == set(settings.get("embedders") or {})


def search_all(
    client: httpx.Client, queries: list[tuple[str, str]], params: dict[str, Any]
) -> dict[str, Any]:
    """One search per query, one at a time; the hit ids and client/server latencies."""
    rankings: dict[str, list[str]] = {}
    client_ms: list[float] = []
    server_ms: list[float] = []
    for qid, text in queries:
        started = time.perf_counter_ns()
        answer = search(client, qid, {"q": text, "limit": RECALL_DEPTH, **params})
        client_ms.append((time.perf_counter_ns() - started) / 1e6)
        rankings[qid] = [str(hit["_id"]) for hit in answer["hits"]]
        server_ms.append(float(answer.get("processingTimeMs", math.nan)))
    return {"rankings": rankings, "client_ms": client_ms, "server_ms": server_ms}


def candidate_buckets(
    client: httpx.Client, queries: list[tuple[str, str]], strategy: str
) -> dict[str, list[tuple[str, int]]]:
    """Every candidate of each query, in the engine's order, with its ``words`` bucket (0 under ``all``,
    which has no words rule)."""
    buckets: dict[str, list[tuple[str, int]]] = {}
    for qid, text in queries:
        body = {
            "q": text,
            "limit": MAX_TOTAL_HITS,
            "matchingStrategy": strategy,
            "showRankingScoreDetails": True,
        }
        buckets[qid] = [
            (str(hit["_id"]), int(hit["_rankingScoreDetails"].get("words", {}).get("matchingWords", 0)))
            for hit in search(client, qid, body)["hits"]
        ]
    return buckets


def search(client: httpx.Client, qid: str, body: dict[str, Any]) -> dict[str, Any]:
    """The answer to ``body``, with hits holding only their id; any error stops the run."""
    response = client.post(f"/indexes/{INDEX}/search", json={**body, "attributesToRetrieve": ["_id"]})
    if response.status_code != 200:
        raise RuntimeError(f"query {qid} answered {response.status_code}: {response.text[:500]}")
    answer: dict[str, Any] = response.json()
    return answer


def bucket_oracle(candidates: Sequence[tuple[str, int]], judged: Mapping[str, int]) -> list[str]:
    """The best ranking the words rule allows: its buckets, most words first, each sorted by grade
    (ties keep the engine's order)."""
    ordered = sorted(candidates, key=lambda candidate: (-candidate[1], -max(judged.get(candidate[0], 0), 0)))
    return [doc for doc, _ in ordered]


def words_rule_bound(buckets: Mapping[str, Sequence[tuple[str, int]]], qrels: Qrels) -> dict[str, float]:
    """The bucket oracle's nDCG@10, and the share of judged documents that are candidates at all."""
    oracle = {qid: bucket_oracle(buckets.get(qid, ()), judged) for qid, judged in qrels.items()}
    everything = {qid: [doc for doc, _ in candidates] for qid, candidates in buckets.items()}
    return {
        "bound_ndcg": evaluate(oracle, qrels)["ndcg"],
        "candidate_recall": evaluate(everything, qrels, k=MAX_TOTAL_HITS)["recall"],
    }


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    queries, qrels = load_queries(), load_qrels()
    settings = {**index_settings(args.stop_words), **args.settings}
    if relevance_vectors.uses_vectors(args):
        settings.update(relevance_vectors.embedder_settings(args.distribution))
    stop_words = STOP_WORD_LISTS[args.stop_words]
    long_queries = sum(
        sum(word not in stop_words for word in _WORD.findall(text.lower())) > QUERY_TERM_LIMIT
        for _, text in queries
    )
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    results = []
    options = relevance_vectors.cluster_options(args)
    with (
        started(RunningCluster(*options, shards=args.shards, data_dir=args.data_dir)) as cluster,
        httpx.Client(base_url=cluster.url, timeout=600.0) as client,
    ):
        print("loading cranfield ...", file=sys.stderr, flush=True)
        load_s = prepare(client, settings)
        search_all(
            client, queries, {"matchingStrategy": args.strategies[0]}
        )  # warm-up: connections, lazy imports
        for strategy in args.strategies if "keyword" in args.modes else ():
            print(f"matchingStrategy {strategy} ...", file=sys.stderr, flush=True)
            searched = search_all(client, queries, {"matchingStrategy": strategy})
            bound = (
                words_rule_bound(candidate_buckets(client, queries, strategy), qrels)
                if strategy != "bm25"
                else {"bound_ndcg": math.nan, "candidate_recall": math.nan}
            )
            results.append(_result(strategy, searched, qrels, bound))
        if "keyword" in args.modes:
            print("bench BM25 ...", file=sys.stderr, flush=True)
            own = relevance_bm25.rankings(
                datasets.DATASETS["cranfield"].documents(),
                queries,
                settings,
                SEARCHABLE_ATTRIBUTES,
                RECALL_DEPTH,
            )
            no_time = {"client_ms": [math.nan], "server_ms": [math.nan]}
            results.append(
                _result(
                    "bench BM25",
                    {"rankings": own, **no_time},
                    qrels,
                    {"bound_ndcg": math.nan, "candidate_recall": math.nan},
                )
            )
        for label, params in relevance_vectors.vector_runs(args):
            print(f"{label} ...", file=sys.stderr, flush=True)
            searched = search_all(client, queries, params)
            results.append(
                _result(label, searched, qrels, {"bound_ndcg": math.nan, "candidate_recall": math.nan})
            )
    return {
        "scenario": "relevance",
        "description": f"Cranfield nDCG@{K}, recall@{RECALL_DEPTH}, MRR@{K} per matchingStrategy "
        "(BEIR conventions), beside a plain BM25 the bench computes",
        "started_at": started_at,
        "options": {
            "shards": args.shards,
            "strategies": args.strategies,
            "k": K,
            "recall_depth": RECALL_DEPTH,
            "stop_words": args.stop_words,
            "settings": args.settings,
            "modes": args.modes,
            "semantic_ratios": args.semantic_ratios,
            "distribution": args.distribution,
        },
        "settings": settings,
        "environment": environment,
        "corpus": {
            "documents": sum(1 for _ in datasets.DATASETS["cranfield"].documents()),
            "queries": len(queries),
            "judged_queries": len(qrels),
            "queries_over_term_limit": long_queries,
            "load_s": round(load_s, 2),
        },
        "references": REFERENCES,
        "results": results,
    }


@contextmanager
def started(cluster: RunningCluster) -> Iterator[RunningCluster]:
    """The cluster, given ``START_TIMEOUT_S`` to start: loading the model on a busy machine takes time."""
    try:
        yield cluster.start(START_TIMEOUT_S)
    finally:
        cluster.__exit__(None, None, None)


def _result(label: str, searched: dict[str, Any], qrels: Qrels, bound: dict[str, float]) -> dict[str, Any]:
    """One row: the run's metrics, latencies and per-query hits."""
    metrics = evaluate(searched["rankings"], qrels)
    per_query = metrics.pop("per_query")
    deep = evaluate(searched["rankings"], qrels, RECALL_DEPTH)
    metrics["recall"] = deep["recall"]
    for qid, values in deep["per_query"].items():
        per_query[qid]["recall"] = values["recall"]
    ordered = sorted(searched["client_ms"])
    return {
        "strategy": label,
        **metrics,
        **bound,
        "zero_hit_queries": sum(not hits for hits in searched["rankings"].values()),
        "mean_ms": statistics.fmean(ordered),
        "p50_ms": ordered[len(ordered) // 2],
        "p95_ms": ordered[math.ceil(0.95 * len(ordered)) - 1],
        "server_mean_ms": statistics.fmean(searched["server_ms"]),
        "per_query": {
            qid: {**values, "hits": searched["rankings"].get(qid, [])} for qid, values in per_query.items()
        },
    }


def render(report: dict[str, Any]) -> str:
    options, env, corpus = report["options"], report["environment"], report["corpus"]
    k = options["k"]
    extra = options["settings"]
    others = f"and {orjson.dumps(extra).decode()}" if extra else "other settings default"
    lines = [
        f"{report['scenario']}: {report['description']}",
        f"shards={options['shards']} | python {env['python']}, {env['cpus']} CPUs, commit {env['commit']}, "
        f"load avg {env['loadavg_before']:.2f} before start",
        f"{corpus['documents']} documents loaded in {corpus['load_s']} s, {corpus['queries']} queries "
        f"({corpus['judged_queries']} judged), one at a time, limit {RECALL_DEPTH}",
        f"settings: searchableAttributes {report['settings']['searchableAttributes']}, stopWords "
        f"{options['stop_words']} ({len(report['settings']['stopWords'])} words), "
        f"maxTotalHits {MAX_TOTAL_HITS}, {others}",
        "",
        f"{'run':<18} {f'nDCG@{k}':>8} {f'recall@{RECALL_DEPTH}':>10} {f'MRR@{k}':>7} {'no hits':>8} "
        f"{'bound':>6} {'cand.rec':>8} {'mean ms':>8} {'p50 ms':>7} {'p95 ms':>7} {'server ms':>9}",
    ]
    for result in report["results"]:
        lines.append(
            f"{result['strategy']:<18} {result['ndcg']:>8.4f} {result['recall']:>10.4f} "
            f"{result['mrr']:>7.4f} {result['zero_hit_queries']:>8} {result['bound_ndcg']:>6.4f} "
            f"{result['candidate_recall']:>8.4f} {result['mean_ms']:>8.2f} "
            f"{result['p50_ms']:>7.2f} {result['p95_ms']:>7.2f} {result['server_mean_ms']:>9.2f}"
        )
    references = ", ".join(f"{name} {value:.3f}" for name, value in report["references"].items())
    lines += [
        "",
        f"reference nDCG@{k} on the same files: {references}",
        f"{corpus['queries_over_term_limit']} of {corpus['queries']} queries have more than "
        f"{QUERY_TERM_LIMIT} words besides stop words: only their first {QUERY_TERM_LIMIT} terms are "
        "searched (search.md §1.1), except with bm25 (a Sift extension, every term counts)",
        "bench BM25: computed by the bench on Sift's analyser tokens, Snowball-stemmed, title + text as one "
        "field, no server involved (bench/relevance_bm25.py)",
        f"bound: the best nDCG@{k} any order inside the words rule's buckets could give; cand.rec: share "
        "of judged documents that match the strategy's most relaxed query at all",
        "ms: client round trip (mean, p50, p95); server: mean processingTimeMs",
    ]
    return "\n".join(lines)
