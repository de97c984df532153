"""Stems under the ``bm25`` strategy, and the language short texts are stemmed in (the contract's
strategies rank stem-only matches in a tier of their own: ``test_search_stem_tier.py``)."""

from __future__ import annotations

from tests.integration.search_support import found, ids, make_index, one_and_three_shards, search
from tests.support.cluster import RunningCluster

DOCS = [
    {"id": 1, "t": "running fast"},
    {"id": 2, "t": "runs slowly"},
    {"id": 3, "t": "surviving christmas"},
    {"id": 4, "t": "survive the night"},
]


def test_bm25_stems_match_rank_below_the_word_and_highlight(cluster: RunningCluster) -> None:
    # The design brief's example: `runs` finds `running`, after the exact word, and highlights it.
    make_index(cluster, "bm25-stems", DOCS)
    body = search(
        cluster,
        "bm25-stems",
        q="runs",
        matchingStrategy="bm25",
        attributesToHighlight=["t"],
        showRankingScore=True,
    )
    assert [hit["id"] for hit in body["hits"]] == [2, 1]
    assert body["hits"][1]["_formatted"]["t"] == "<em>running</em> fast"
    assert body["hits"][0]["_rankingScore"] > body["hits"][1]["_rankingScore"]
    assert found(cluster, "bm25-stems", "surviving", matchingStrategy="bm25") == [3, 4]


FRENCH = (
    "Le chat mange la souris dans la cuisine pendant que les enfants jouent dehors avec leurs amis, "
    "et la grand-mère prépare une tarte aux pommes pour le dîner du soir."
)


def test_bm25_stems_short_texts_alike_on_any_shard_count() -> None:
    # One long French document first, then short ones no language is detected in. They used to be
    # stemmed in the shard's most common language so far (French on the shard holding the long one,
    # English elsewhere), and short queries too: `chantait` found every `chanter` on one shard (French
    # stem `chant`) and a third of them on three. Text too short to detect is now English, whatever the
    # shard holds; `localizedAttributes` and `locales` still choose French.
    docs = [{"id": 0, "t": FRENCH}] + [{"id": number, "t": "chanter"} for number in range(1, 13)]
    localized = [{"attributePatterns": ["t"], "locales": ["fra"]}]
    with one_and_three_shards("short-language", docs, {}) as clusters:
        answers = [
            search(cluster, "short-language", q="chantait", matchingStrategy="bm25") for cluster in clusters
        ]
        assert [(ids(body), body["estimatedTotalHits"]) for body in answers] == [([], 0), ([], 0)]
        for cluster in clusters:
            make_index(cluster, "short-french", docs, {"localizedAttributes": localized})
            body = search(cluster, "short-french", q="chantait", locales=["fra"], matchingStrategy="bm25")
            assert (sorted(ids(body)), body["estimatedTotalHits"]) == (list(range(1, 13)), 12)
