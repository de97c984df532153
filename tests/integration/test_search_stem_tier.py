"""Stemmed matches rank below every other match (design brief: "runs" finds "running" without hurting
exact matches). The documents a query matches without stems rank as the reference engine, which does
not stem, ranks them; those that need a stem to match come after all of them. On a two-shard cluster."""

from __future__ import annotations

from typing import Any

from tests.integration.search_support import found, ids, make_index, search
from tests.support.cluster import RunningCluster


def t(*texts: str) -> list[dict[str, object]]:
    return [
        {"id": n, "t": text, "kind": "even" if n % 2 == 0 else "odd"} for n, text in enumerate(texts, start=1)
    ]


def scores(body: dict[str, Any]) -> list[float]:
    return [hit["_rankingScore"] for hit in body["hits"]]


def test_a_stem_ranks_below_a_typo(cluster: RunningCluster) -> None:
    # `survive` shares only the stem `surviv` with the query; `survivng` is one typo from it. Both
    # used to cost one typo, so insertion order put the stem first.
    make_index(cluster, "stem-typo", t("survive the night", "survivng alone", "surviving christmas"))
    assert found(cluster, "stem-typo", "surviving") == [3, 2, 1]
    body = search(cluster, "stem-typo", q="surviving", showRankingScore=True, showRankingScoreDetails=True)
    assert body["estimatedTotalHits"] == 3
    assert scores(body) == sorted(scores(body), reverse=True) and len(set(scores(body))) == 3
    assert 0 < scores(body)[-1] < 1
    stem_hit = body["hits"][2]["_rankingScoreDetails"]
    # The stem hit shows its own ranks, in the contract's shape: the stem costs one typo.
    assert list(stem_hit) == ["words", "typo", "proximity", "attributeRank", "wordPosition", "exactness"]
    assert stem_hit["typo"] == {"order": 1, "typoCount": 1, "maxTypoCount": 2, "score": 2 / 3}
    # Paging across the tier boundary.
    assert ids(search(cluster, "stem-typo", q="surviving", offset=1, limit=1)) == [2]
    assert ids(search(cluster, "stem-typo", q="surviving", offset=2, limit=5)) == [1]


def test_a_stem_of_the_first_word_ranks_below_the_first_word_alone(cluster: RunningCluster) -> None:
    # Under `last` a document must hold `playing` (the first word) to match without stems. `plays
    # with` holds both words, but the first only by its stem: it comes after `playing cards`, which
    # holds one word, instead of before it.
    docs = t("plays with fire", "playing cards", "playing with love")
    make_index(cluster, "stem-words", docs, {"filterableAttributes": ["kind"]})
    assert found(cluster, "stem-words", "playing with") == [3, 2, 1]
    body = search(cluster, "stem-words", q="playing with", facets=["kind"], showRankingScore=True)
    assert body["estimatedTotalHits"] == 3
    assert body["facetDistribution"] == {"kind": {"odd": 2, "even": 1}}
    assert scores(body) == sorted(scores(body), reverse=True) and len(set(scores(body))) == 3


def test_an_exact_word_with_a_stemmed_one_ranks_as_the_exact_word_alone(cluster: RunningCluster) -> None:
    # `owl loves` holds `owl` and only the stem of `lovely`: it ranks as a one-word match, tied with
    # `owl alone` (inserted first), not as a two-word match above it. Under `frequency` the frequent
    # `lovely` is dropped first, which leaves the same buckets.
    docs = t("owl alone", "owl loves", "owl lovely", "lovely day", "lovely night", "lovely cake")
    make_index(cluster, "stem-kept", docs)
    for strategy in ("last", "frequency"):
        body = search(
            cluster, "stem-kept", q="owl lovely", matchingStrategy=strategy, showRankingScoreDetails=True
        )
        assert ids(body) == [3, 1, 2], strategy
        assert body["hits"][2]["_rankingScoreDetails"]["words"]["matchingWords"] == 1
        assert body["hits"][2]["_rankingScoreDetails"] == body["hits"][1]["_rankingScoreDetails"]


def test_stems_still_match_and_highlight(cluster: RunningCluster) -> None:
    # The design brief's example: `runs` finds `running`, after the exact word, and highlights it.
    make_index(cluster, "stem-highlight", t("running fast", "runs slowly"))
    body = search(cluster, "stem-highlight", q="runs", attributesToHighlight=["t"], showRankingScore=True)
    assert ids(body) == [2, 1]
    assert body["hits"][1]["_formatted"]["t"] == "<em>running</em> fast"
    # A threshold between the two keeps the exact word alone, and counts it alone.
    between = (scores(body)[0] + scores(body)[1]) / 2
    body = search(cluster, "stem-highlight", q="runs", rankingScoreThreshold=between)
    assert (ids(body), body["estimatedTotalHits"]) == ([2], 1)
