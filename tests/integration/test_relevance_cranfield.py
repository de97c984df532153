"""Ranking quality on Cranfield does not regress: nDCG@10 per matching strategy, measured as the
relevance bench measures it (``bench/relevance.py``: same index settings, queries and metrics).

A ranking change moves these figures. One that lowers a figure fails here, so the drop is seen, then
fixed or accepted by moving the floor to the new measured value. Ranking is deterministic (the
corpus, settings and queries give the same hits on any shard count), so each floor sits just under
the value measured when it was set.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from bench import datasets, relevance, relevance_vectors
from tests.support.cluster import RunningCluster

# Measured at f866e81: last 0.1244, all 0.0354, frequency 0.2039 (python -m bench.run relevance).
# Positions and exactness as the reference engine gives them (branch diff): last 0.1247, all 0.0354,
# frequency 0.2029. Proximity scoped to the typo bucket and exactness as the reference checks it
# (branch order, for the differential's first pages): last 0.1238, all 0.0347, frequency 0.2022.
# Stemmed matches a tier below every other match (branch stems: a word matched only by its stem no
# longer counts for the words and typo rules of documents that match without stems, as the reference,
# which does not stem, ranks them), merged with the above at 3474f4e: last 0.1126, all 0.0347,
# frequency 0.1961. The opt-in keyword scoring of issue 24 is where Cranfield is to be won back.
# The opt-in bm25 strategy (branch bm25, a Sift extension): 0.3980, the other three unchanged
# (last 0.1126, all 0.0347, frequency 0.1965).
FLOORS = {"last": 0.112, "all": 0.0345, "frequency": 0.195, "bm25": 0.397}


def test_cranfield_ndcg_at_10_does_not_regress(cluster: RunningCluster) -> None:
    queries, qrels = relevance.load_queries(), relevance.load_qrels()
    measured = {}
    with httpx.Client(base_url=cluster.url, timeout=60.0) as client:
        relevance.prepare(client, relevance.index_settings("smart"))
        for strategy in FLOORS:
            rankings = relevance.search_all(client, queries, {"matchingStrategy": strategy})["rankings"]
            measured[strategy] = relevance.evaluate(rankings, qrels)["ndcg"]
    below = {strategy: value for strategy, value in measured.items() if value < FLOORS[strategy]}
    assert not below, f"nDCG@10 under its floor: {below} (floors {FLOORS}, all measured {measured})"
    # frequency keeps the rarest terms, last the first ones: on these long questions the first
    # ranks better, and all (every term required) matches almost nothing.
    assert measured["frequency"] > measured["last"] > measured["all"]


# MiniLM (the bench's embedder, title and text): vector alone 0.3837; hybrid under bm25 at
# semanticRatio 0.5, the legs' scores added over 50 hits each: 0.4189; with the query's vector moved
# towards bm25's three best hits (gateway/search/feedback.py): 0.4326 (the issue's targets: vector
# 0.38, hybrid 0.43).
VECTOR_FLOORS = {"vector": 0.38, "hybrid 0.5 bm25": 0.428}


def test_cranfield_vector_and_hybrid_ndcg_at_10_do_not_regress(cluster: RunningCluster) -> None:
    """The same searches with the local MiniLM embedding the corpus (about a minute on 2 cores)."""
    queries, qrels = relevance.load_queries(), relevance.load_qrels()
    settings = relevance_vectors.embedder_settings()
    measured = {}
    with httpx.Client(base_url=cluster.url, timeout=60.0) as client:
        relevance.prepare(client, relevance.index_settings("smart"))
        task = client.patch(f"/indexes/{relevance.INDEX}/settings", json=settings)
        task.raise_for_status()
        done = datasets.wait_for_task(client, task.json()["taskUid"], time.monotonic() + 1800.0)
        assert done["status"] == "succeeded", done
        searches: dict[str, dict[str, Any]] = {
            "vector": {"hybrid": {"embedder": relevance_vectors.EMBEDDER, "semanticRatio": 1.0}},
            "hybrid 0.5 bm25": {
                "hybrid": {"embedder": relevance_vectors.EMBEDDER, "semanticRatio": 0.5},
                "matchingStrategy": "bm25",
            },
        }
        for label, params in searches.items():
            rankings = relevance.search_all(client, queries, params)["rankings"]
            measured[label] = relevance.evaluate(rankings, qrels)["ndcg"]
    below = {label: value for label, value in measured.items() if value < VECTOR_FLOORS[label]}
    assert not below, f"nDCG@10 under its floor: {below} (floors {VECTOR_FLOORS}, all measured {measured})"
