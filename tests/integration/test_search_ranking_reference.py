"""Ranking details the contract leaves open, settled by the reference engine (search.md §7.4).

Each case comes from a query of the differential benchmark (``bench/differential.py``) where Sift
ordered the same hits differently; the crafted documents isolate the rule computation at fault, and
the expected order is the reference engine's answer on the same documents.
"""

from __future__ import annotations

from typing import Any

from tests.integration.search_support import make_index, search
from tests.support.cluster import RunningCluster


def t(*texts: str) -> list[dict[str, object]]:
    """Documents ``{"id": 1.., "t": text}`` in the given (insertion) order."""
    return [{"id": n, "t": text} for n, text in enumerate(texts, start=1)]


def scored(cluster: RunningCluster, uid: str, q: str, rule: str) -> list[tuple[Any, Any]]:
    """Each hit's id with the rule's detail: its score, or its match type for exactness."""
    body = search(cluster, uid, q=q, showRankingScoreDetails=True, limit=100)
    field = "matchType" if rule == "exactness" else "score"
    return [(hit["id"], hit["_rankingScoreDetails"][rule][field]) for hit in body["hits"]]


# --- proximity ----------------------------------------------------------------------------------------


def test_proximity_ignores_matches_outside_the_typo_bucket(cluster: RunningCluster) -> None:
    # Both documents hold `sun` and `flower` exactly (typo bucket 0); the first also holds `sunflowr`,
    # the 2-gram `sunflower` with a typo (cost 3). That match is not the document's bucket, so it
    # must not make the pair adjacent: `sun ... flower` 5 apart is as far as it gets (1/4).
    make_index(cluster, "prox-typo-scope", t("sun one two three four flower sunflowr", "sun one flower"))
    assert scored(cluster, "prox-typo-scope", "sun flower", "proximity") == [(2, 0.75), (1, 0.25)]


def test_proximity_one_word_matching_both_terms_is_no_pair(cluster: RunningCluster) -> None:
    # `as` is the word `as` and a word starting with the prefix `a`: it is no pair with itself.
    make_index(cluster, "prox-same-word", t("zeta as", "as one also"))
    assert scored(cluster, "prox-same-word", "as a", "proximity") == [(2, 0.75), (1, 0.25)]
