"""The relevance metrics of ``bench/relevance.py`` against hand-computed values.

The Cranfield figures are only comparable with the published references (BM25 0.367 nDCG@10) if
the math is trec_eval's as BEIR calls it: linear gains, ``log2(rank + 1)`` discount, an ideal
ranking from every judged document, empty runs scoring 0 and identical query/document ids dropped.
"""

from __future__ import annotations

import math

import pytest

from bench.relevance import bucket_oracle, words_rule_bound
from bench.relevance_metrics import (
    dcg,
    evaluate,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank_at_k,
)

JUDGED = {"a": 3, "b": 2, "c": 1, "z": 0}


def test_dcg_discounts_by_log2_of_rank_plus_one() -> None:
    # 3/log2(2) + 2/log2(3) + 1/log2(4) = 3 + 1.26186 + 0.5
    assert dcg([3, 2, 1]) == pytest.approx(4.761860, abs=1e-6)
    assert dcg([]) == 0


def test_ndcg_uses_linear_gains_and_the_ideal_of_all_judged_documents() -> None:
    # DCG of b, x, a = 2/1 + 0/log2(3) + 3/2 = 3.5; ideal a, b, c = 4.761860
    assert ndcg_at_k(["b", "x", "a"], JUDGED) == pytest.approx(3.5 / 4.761860, abs=1e-6)
    assert ndcg_at_k(["b", "x", "a"], JUDGED) == pytest.approx(0.735007, abs=1e-6)
    # One of two equally relevant documents found: 1 / (1 + 1/log2(3)) = 0.613147
    assert ndcg_at_k(["a"], {"a": 1, "b": 1}) == pytest.approx(0.613147, abs=1e-6)


def test_ndcg_is_one_for_the_ideal_ranking_and_zero_without_relevant_hits() -> None:
    assert ndcg_at_k(["a", "b", "c"], JUDGED) == pytest.approx(1.0)
    assert ndcg_at_k(["z", "x"], JUDGED) == 0
    assert ndcg_at_k([], JUDGED) == 0
    assert ndcg_at_k(["a"], {"a": 0}) == 0  # no positive judgment: no ideal, 0 as trec_eval


def test_ndcg_cuts_both_the_ranking_and_the_ideal_at_k() -> None:
    assert ndcg_at_k(["x", "y", "a"], JUDGED, k=2) == 0
    # 12 relevant documents, the 10 first retrieved: perfect at 10, whatever the 2 others.
    judged = {str(n): 1 for n in range(12)}
    assert ndcg_at_k([str(n) for n in range(10)], judged, k=10) == pytest.approx(1.0)
    # k=2 with grades 3 then 1 retrieved against ideal 3, 2: (3 + 1/log2 3) / (3 + 2/log2 3) = 0.851959
    assert ndcg_at_k(["a", "c"], JUDGED, k=2) == pytest.approx(0.851959, abs=1e-6)


def test_recall_and_reciprocal_rank() -> None:
    assert recall_at_k(["b", "x", "a"], JUDGED) == pytest.approx(2 / 3)
    assert recall_at_k(["b", "x", "a"], JUDGED, k=1) == pytest.approx(1 / 3)
    assert reciprocal_rank_at_k(["x", "z", "c"], JUDGED) == pytest.approx(1 / 3)
    assert reciprocal_rank_at_k(["x", "z", "c"], JUDGED, k=2) == 0


def test_evaluate_follows_beir_conventions() -> None:
    qrels = {"1": {"1": 2, "5": 1}, "2": {"7": 1}, "3": {"9": 0}, "4": {"4": 1}}
    rankings = {"1": ["1", "5"], "3": ["9"], "4": ["8", "4"]}
    result = evaluate(rankings, qrels)
    # Query 3 has no positive judgment: left out. Query 2 has no run: 0. In query 1 the hit "1" is
    # the query's own id: dropped, so "5" ranks first: 1 / (2 + 1/log2 3) = 0.380094.
    assert result["queries"] == 3
    per_query = result["per_query"]
    assert per_query["1"]["ndcg"] == pytest.approx(1 / (2 + 1 / math.log2(3)), abs=1e-9)
    assert per_query["2"] == {"ndcg": 0.0, "recall": 0.0, "mrr": 0.0}
    assert per_query["4"] == {"ndcg": 0.0, "recall": 0.0, "mrr": 0.0}  # its only relevant hit is "4"
    assert result["ndcg"] == pytest.approx(0.380094 / 3, abs=1e-6)
    assert result["mrr"] == pytest.approx(1 / 3)
    kept = evaluate(rankings, qrels, ignore_identical_ids=False)
    assert kept["per_query"]["1"]["ndcg"] == pytest.approx(1.0)
    assert kept["per_query"]["4"]["mrr"] == pytest.approx(0.5)


def test_the_bucket_oracle_sorts_inside_words_buckets_only() -> None:
    # Engine order: x (3 words), c (3), a (2), b (2), z (1). Grades a 3, b 2, c 1.
    candidates = [("x", 3), ("c", 3), ("a", 2), ("b", 2), ("z", 1)]
    # c beats x inside the 3-word bucket; a stays below c although it is graded higher.
    assert bucket_oracle(candidates, JUDGED) == ["c", "x", "a", "b", "z"]
    # Equal grades keep the engine's order; negative grades count as 0.
    assert bucket_oracle([("p", 1), ("q", 1), ("r", 1)], {"p": -1, "r": 0}) == ["p", "q", "r"]


def test_the_bound_is_the_oracle_ndcg_and_candidate_recall_spans_every_candidate() -> None:
    qrels = {"1": JUDGED, "2": {"7": 1}}
    buckets = {"1": [("x", 2)] + [(f"filler{n}", 2) for n in range(12)] + [("a", 1), ("b", 1)]}
    bound = words_rule_bound(buckets, qrels)
    # Query 1: a and b sit below 13 two-word candidates, out of the first 10 whatever the order inside
    # the buckets; c is no candidate. Query 2 has none. Both score 0; 2 of 3 and 0 of 1 are candidates.
    assert bound["bound_ndcg"] == 0
    assert bound["candidate_recall"] == pytest.approx((2 / 3 + 0) / 2)
    # With a and b in the top bucket, the oracle ranks them first: (3 + 2/log2 3) / ideal(3, 2, 1).
    buckets["1"] = [("x", 2), ("b", 2), ("a", 2)]
    expected = (3 + 2 / math.log2(3)) / 4.761860
    assert words_rule_bound(buckets, qrels)["bound_ndcg"] == pytest.approx(expected / 2, abs=1e-6)
