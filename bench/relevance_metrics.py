"""Cranfield metrics as BEIR computes them (``bench/relevance.py``).

The metrics follow BEIR's ``EvaluateRetrieval.evaluate`` (pytrec_eval, i.e. trec_eval's ``ndcg_cut``,
``recall`` and BEIR's ``mrr``) so that the figures are comparable with those references:

- gain is the judged grade itself (linear, not ``2^rel - 1``), discounted by ``log2(rank + 1)``; the
  ideal ranking is built from every judged document of the query, not only the retrieved ones;
- a query whose hits are empty scores 0 (BEIR's run holds every query), and queries without any
  positive judgment are left out of the means (Cranfield has none);
- a document whose id equals the query id is dropped from that query's hits (BEIR's default
  ``ignore_identical_ids=True``; on Cranfield it touches query 225 only, which judges document 225).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

K = 10
Qrels = dict[str, dict[str, int]]


def dcg(gains: Sequence[float]) -> float:
    """DCG with trec_eval's discount: the gain at rank ``i`` (from 1) divided by ``log2(i + 1)``."""
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, 1))


def ndcg_at_k(ranking: Sequence[str], judged: Mapping[str, int], k: int = K) -> float:
    """nDCG@k as trec_eval's ``ndcg_cut``: linear gains, ideal from all positive judgments, 0 when none."""
    ideal = dcg(sorted((grade for grade in judged.values() if grade > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg([max(judged.get(doc, 0), 0) for doc in ranking[:k]]) / ideal


def recall_at_k(ranking: Sequence[str], judged: Mapping[str, int], k: int = K) -> float:
    """Share of the positively judged documents found in the first ``k`` hits."""
    relevant = {doc for doc, grade in judged.items() if grade > 0}
    return len(relevant.intersection(ranking[:k])) / len(relevant) if relevant else 0.0


def reciprocal_rank_at_k(ranking: Sequence[str], judged: Mapping[str, int], k: int = K) -> float:
    """``1 / rank`` of the first positively judged hit within the first ``k``, else 0."""
    for rank, doc in enumerate(ranking[:k], 1):
        if judged.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def evaluate(
    rankings: Mapping[str, Sequence[str]], qrels: Qrels, k: int = K, ignore_identical_ids: bool = True
) -> dict[str, Any]:
    """Mean nDCG, recall and MRR at ``k`` over the queries with a positive judgment, plus per-query values.

    A query missing from ``rankings`` counts as one with no hits.
    """
    per_query: dict[str, dict[str, float]] = {}
    for qid, judged in qrels.items():
        if not any(grade > 0 for grade in judged.values()):
            continue
        ranking = [doc for doc in rankings.get(qid, ()) if not (ignore_identical_ids and doc == qid)]
        per_query[qid] = {
            "ndcg": ndcg_at_k(ranking, judged, k),
            "recall": recall_at_k(ranking, judged, k),
            "mrr": reciprocal_rank_at_k(ranking, judged, k),
        }
    means = {
        name: statistics.fmean(q[name] for q in per_query.values()) if per_query else 0.0
        for name in ("ndcg", "recall", "mrr")
    }
    return {"queries": len(per_query), **means, "per_query": per_query}
