"""``matchingStrategy: "bm25"`` (a Sift extension, issue 24): any term qualifies, one BM25 score.

The expectations come from what the extension promises (README "BM25 scoring"): every query term
counts (no ten-term cut, no mandatory word), rare terms weigh more than common ones, fields weigh by
their ``searchableAttributes`` order, and the score combines with filters, sort, facets, distinct,
pages and hybrid search, the same on 1 and 3 shards. One module-scoped pair of clusters serves all.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.search_support import (
    assert_error,
    found,
    ids,
    make_index,
    search,
    search_get,
    search_raw,
)
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

BM25 = {"matchingStrategy": "bm25"}
FILLER = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
]
WORDS = ["river", "stone", "light", "shadow", "north", "garden", "silver", "engine", "winter", "cloud"]
RARE = ["quasar", "nebula", "pulsar"]


def _random_documents(count: int = 200, seed: int = 24) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    docs = []
    for number in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 8))]
        if rng.random() < 0.1:
            words.insert(rng.randrange(len(words) + 1), rng.choice(RARE))
        docs.append(
            {
                "id": number,
                "title": " ".join(words[: rng.randint(1, len(words))]),
                "body": " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12))),
                "group": (group := rng.randint(0, 4)),
                "tag": f"t{group}",
                "n": rng.randint(0, 20),
                "_vectors": {"e": [round(rng.uniform(-1, 1), 2) for _ in range(3)]},
            }
        )
    return docs


RANDOM_DOCS = _random_documents()
RANDOM_SETTINGS: dict[str, Any] = {
    "searchableAttributes": ["title", "body"],
    "filterableAttributes": ["group", "n", "tag"],
    "sortableAttributes": ["n"],
    "embedders": {"e": {"source": "userProvided", "dimensions": 3}},
}


START_TIMEOUT_S = 300
"""Given to each cluster to start: the suite may run on a loaded machine."""


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    """A 1-shard and a 3-shard cluster holding the same random index (stopped even when the second
    fails to start)."""
    one, three = RunningCluster(shards=1), RunningCluster(shards=3)
    try:
        for running in (one, three):
            running.start(START_TIMEOUT_S)
            make_index(running, "random", RANDOM_DOCS, RANDOM_SETTINGS)
        yield one, three
    finally:
        for running in (one, three):
            running.__exit__(None, None, None)


@pytest.fixture(scope="module")
def cluster(clusters: tuple[RunningCluster, RunningCluster]) -> RunningCluster:
    """The 3-shard cluster: documents spread over shards, term statistics summed."""
    return clusters[1]


def test_a_key_term_as_the_fifteenth_word_is_found(cluster: RunningCluster) -> None:
    docs = [{"id": 1, "text": "quasar"}, *({"id": 2 + n, "text": word} for n, word in enumerate(FILLER))]
    make_index(cluster, "fifteenth", docs)
    q = " ".join([*FILLER, "quasar"])
    assert 1 not in found(cluster, "fifteenth", q)  # the contract's first 10 terms only
    assert 1 in found(cluster, "fifteenth", q, **BM25)


def test_no_word_is_mandatory(cluster: RunningCluster) -> None:
    """Cranfield query 150's case: the relevant document lacks the query's first word."""
    docs = [
        {"id": 1, "text": "what is a wing"},
        {"id": 2, "text": "what is the body"},
        {"id": 3, "text": "what a day"},
        {"id": 4, "text": "second order wing body interference magnitude"},
    ]
    make_index(cluster, "mandatory", docs)
    q = "what is the magnitude of second order wing body interference"
    assert 4 not in found(cluster, "mandatory", q)  # every hit holds "what" under `last`
    assert found(cluster, "mandatory", q, **BM25)[0] == 4


def test_a_rare_term_outranks_a_common_one(cluster: RunningCluster) -> None:
    docs = [{"id": n, "text": f"common filler{n}"} for n in range(8)]
    docs.append({"id": 100, "text": "rare filler"})
    make_index(cluster, "rarity", docs)
    assert found(cluster, "rarity", "common rare", **BM25)[0] == 100


def test_fields_weigh_by_searchable_attributes_order(cluster: RunningCluster) -> None:
    docs = [
        {"id": 1, "title": "plain words", "body": "zebra crossing"},
        {"id": 2, "title": "zebra crossing", "body": "plain words"},
        {"id": 3, "title": "other words", "body": "nothing here"},
    ]
    make_index(cluster, "fieldorder", docs, {"searchableAttributes": ["title", "body"]})
    assert found(cluster, "fieldorder", "zebra", **BM25) == [2, 1]
    make_index(cluster, "fieldorder2", docs, {"searchableAttributes": ["body", "title"]})
    assert found(cluster, "fieldorder2", "zebra", **BM25) == [1, 2]


def test_exact_words_outrank_stems_and_typos(cluster: RunningCluster) -> None:
    docs = [
        {"id": 1, "text": "engines ready"},
        {"id": 2, "text": "enigne ready"},
        {"id": 3, "text": "engine ready"},
    ]
    make_index(cluster, "forms", docs)
    assert found(cluster, "forms", "engine", **BM25) == [3, 1, 2]


def test_proximity_is_a_bonus(cluster: RunningCluster) -> None:
    docs = [
        {"id": 1, "text": "solar one two three four five six seven panel"},
        {"id": 2, "text": "solar panel one two three four five six seven"},
    ]
    make_index(cluster, "near", docs)
    assert found(cluster, "near", "solar panel", **BM25) == [2, 1]


def test_score_is_normalised_with_details(cluster: RunningCluster) -> None:
    body = search(
        cluster, "random", q="quasar river light", showRankingScore=True, showRankingScoreDetails=True, **BM25
    )
    scores = [hit["_rankingScore"] for hit in body["hits"]]
    assert scores and scores == sorted(scores, reverse=True)
    assert all(0 < score <= 1 for score in scores)
    for hit in body["hits"]:
        details = hit["_rankingScoreDetails"]
        assert set(details) == {"bm25"}, details
        assert details["bm25"]["order"] == 0
        assert details["bm25"]["score"] == hit["_rankingScore"]
        assert details["bm25"]["value"] > 0
    threshold = scores[len(scores) // 2]
    kept = search(
        cluster, "random", q="quasar river light", rankingScoreThreshold=threshold, limit=200, **BM25
    )
    assert (
        ids(kept)
        == ids(search(cluster, "random", q="quasar river light", limit=200, **BM25))[: len(kept["hits"])]
    )
    assert all(hit_score >= threshold for hit_score in scores[: len(kept["hits"])])
    assert kept["estimatedTotalHits"] == len(kept["hits"])


def test_filters_facets_sort_distinct_and_pages(cluster: RunningCluster) -> None:
    q = "quasar nebula winter"
    everything = search(cluster, "random", q=q, limit=200, **BM25)
    expected = {
        doc["id"] for doc in RANDOM_DOCS if set(q.split()) & set(f"{doc['title']} {doc['body']}".split())
    }
    assert set(ids(everything)) == expected
    assert everything["estimatedTotalHits"] == len(expected)
    filtered = search(cluster, "random", q=q, filter="group = 2", limit=200, facets=["group"], **BM25)
    assert ids(filtered) == [hit for hit in ids(everything) if RANDOM_DOCS[hit]["group"] == 2]
    distribution = search(cluster, "random", q=q, limit=0, facets=["group"], **BM25)["facetDistribution"]
    counts: dict[str, int] = {}
    for hit in expected:
        counts[str(RANDOM_DOCS[hit]["group"])] = counts.get(str(RANDOM_DOCS[hit]["group"]), 0) + 1
    assert distribution == {"group": counts}
    paged = search(cluster, "random", q=q, page=2, hitsPerPage=5, **BM25)
    assert ids(paged) == ids(everything)[5:10]
    assert paged["totalHits"] == len(expected)
    assert ids(search(cluster, "random", q=q, offset=3, limit=4, **BM25)) == ids(everything)[3:7]
    distinct = ids(search(cluster, "random", q=q, distinct="group", limit=200, **BM25))
    firsts: dict[int, int] = {}
    for hit in ids(everything):
        firsts.setdefault(RANDOM_DOCS[hit]["group"], hit)
    assert distinct == list(firsts.values())


def test_sort_keeps_its_place_among_the_rules(cluster: RunningCluster) -> None:
    docs = [{"id": n, "text": "apple" if n % 2 else "apple apple pie", "n": 10 - n} for n in range(6)]
    make_index(
        cluster, "sorted", docs, {"sortableAttributes": ["n"], "rankingRules": ["sort", "words", "typo"]}
    )
    assert found(cluster, "sorted", "apple", sort=["n:asc"], **BM25) == [5, 4, 3, 2, 1, 0]
    make_index(cluster, "custom", docs, {"rankingRules": ["n:desc", "words", "proximity"]})
    assert found(cluster, "custom", "apple", **BM25) == [0, 1, 2, 3, 4, 5]
    ranked = search(cluster, "custom", q="apple", showRankingScoreDetails=True, **BM25)["hits"][0]
    assert list(ranked["_rankingScoreDetails"]) == ["n:desc", "bm25"]


def test_validation_lists_bm25(cluster: RunningCluster) -> None:
    response = search_raw(cluster, "random", q="river", matchingStrategy="best")
    assert_error(response, "invalid_search_matching_strategy")
    assert "`bm25`" in response.json()["message"], response.json()
    get = search_get(cluster, "random", {"q": "river", "matchingStrategy": "bm25"})
    assert get.status_code == 200, get.text
    assert get.json()["hits"]
    assert_error(
        search_get(cluster, "random", {"q": "river", "matchingStrategy": "nope"}),
        "invalid_search_matching_strategy",
    )


def test_multi_search_federation_and_facet_search_accept_bm25(cluster: RunningCluster) -> None:
    single = ids(search(cluster, "random", q="quasar light", **BM25))
    multi = httpx.post(
        f"{cluster.url}/multi-search",
        json={"queries": [{"indexUid": "random", "q": "quasar light", **BM25}]},
        timeout=30,
    )
    assert multi.status_code == 200, multi.text
    assert ids(multi.json()["results"][0]) == single
    federated = httpx.post(
        f"{cluster.url}/multi-search",
        json={"federation": {}, "queries": [{"indexUid": "random", "q": "quasar light", **BM25}]},
        timeout=30,
    )
    assert federated.status_code == 200, federated.text
    assert ids(federated.json()) == single
    facets = httpx.post(
        f"{cluster.url}/indexes/random/facet-search",
        json={"facetName": "tag", "q": "quasar", **BM25},
        timeout=30,
    )
    assert facets.status_code == 200, facets.text
    expected = {doc["tag"] for doc in RANDOM_DOCS if "quasar" in f"{doc['title']} {doc['body']}".split()}
    assert {hit["value"] for hit in facets.json()["facetHits"]} == expected


def test_hybrid_keyword_leg_uses_bm25(cluster: RunningCluster) -> None:
    """With ``semanticRatio`` 0 the keyword leg alone ranks: its hits are bm25's; with a low ratio
    bm25's best hits still lead the fused list, showing their ``bm25`` details."""
    q = " ".join([*FILLER, "quasar"])
    expected = ids(search(cluster, "random", q=q, **BM25))
    assert expected
    keyword_only = {"hybrid": {"embedder": "e", "semanticRatio": 0.0}, "vector": [1, 0, 0]}
    assert ids(search(cluster, "random", q=q, **keyword_only, **BM25)) == expected
    low = {"hybrid": {"embedder": "e", "semanticRatio": 0.1}, "vector": [1, 0, 0]}
    fused = search(cluster, "random", q=q, showRankingScoreDetails=True, **low, **BM25)
    assert ids(fused)[:2] == expected[:2]
    assert all("bm25" in hit["_rankingScoreDetails"] for hit in fused["hits"][:2])


def test_hybrid_with_bm25_adds_the_legs_scores(cluster: RunningCluster) -> None:
    """Under bm25 a hybrid hit scores ``(1 - ratio) * keyword + ratio * similarity``: the document
    both legs find ranks above each leg's own best, which the contract's merge (step 5) would put
    first, as it keeps only a document's better leg. The similarities are those of the query's vector
    moved towards the keyword hits' (``..._moves_the_query_vector_towards_the_best_keyword_hits``)."""
    docs = [
        {"id": 1, "title": "quasar nebula quasar", "_vectors": {"e": [0.0, -1.0, 0.0]}},
        {"id": 2, "title": "quasar light", "_vectors": {"e": [0.8, 0.6, 0.0]}},
        {"id": 3, "title": "winter", "_vectors": {"e": [1.0, 0.0, 0.0]}},
        {"id": 4, "title": "garden", "_vectors": {"e": [0.0, 0.0, 1.0]}},
    ]
    make_index(cluster, "fused", docs, {"embedders": RANDOM_SETTINGS["embedders"]})
    query = {"q": "quasar nebula", "vector": [1.0, 0.0, 0.0], "showRankingScore": True, **BM25}

    def scores(ratio: float, **vector: list[float]) -> dict[int, float]:
        body = search(
            cluster, "fused", hybrid={"embedder": "e", "semanticRatio": ratio}, **{**query, **vector}
        )
        return {hit["id"]: hit["_rankingScore"] for hit in body["hits"]}

    # [1, 0, 0] plus the mean of the keyword hits' vectors, docs 1 and 2
    keyword, semantic = scores(0.0), scores(1.0, vector=[1.4, -0.2, 0.0])
    expected = {
        doc: 0.5 * keyword.get(doc, 0.0) + 0.5 * semantic.get(doc, 0.0) for doc in {*keyword, *semantic}
    }
    fused = search(cluster, "fused", hybrid={"embedder": "e", "semanticRatio": 0.5}, **query)
    assert ids(fused) == sorted(expected, key=lambda doc: (-expected[doc], doc))
    assert ids(fused)[0] == 2, "the document both legs find comes first"
    assert max(keyword, key=keyword.__getitem__) == 1 and max(semantic, key=semantic.__getitem__) == 3
    for hit in fused["hits"]:
        assert hit["_rankingScore"] == pytest.approx(expected[hit["id"]])
    assert fused["semanticHitCount"] == sum(semantic.get(d, 0) > keyword.get(d, 0) for d in ids(fused))


def test_hybrid_with_bm25_fuses_even_when_keyword_hits_suffice(cluster: RunningCluster) -> None:
    """The contract's step 2 (a full page of keyword hits each weighing at least 0.45 answers alone)
    belongs to its merge: under bm25 the page's hits still gather their similarity."""
    docs = [
        {"id": 1, "title": "quasar nebula quasar", "_vectors": {"e": [-1.0, 0.0, 0.0]}},
        {"id": 2, "title": "quasar nebula", "_vectors": {"e": [1.0, 0.0, 0.0]}},
        {"id": 3, "title": "winter", "_vectors": {"e": [0.0, 1.0, 0.0]}},
    ]
    make_index(cluster, "suffices", docs, {"embedders": RANDOM_SETTINGS["embedders"]})
    query = {"q": "quasar nebula", "vector": [1.0, 0.0, 0.0], "limit": 2, "showRankingScore": True, **BM25}

    def answer(ratio: float) -> dict[str, Any]:
        return search(cluster, "suffices", hybrid={"embedder": "e", "semanticRatio": ratio}, **query)

    keyword = {hit["id"]: hit["_rankingScore"] for hit in answer(0.0)["hits"]}
    semantic = {hit["id"]: hit["_rankingScore"] for hit in answer(1.0)["hits"]}
    assert len(keyword) == 2 and all(score * 0.9 >= 0.45 for score in keyword.values()), keyword
    fused = answer(0.1)
    expected = {doc: 0.9 * keyword.get(doc, 0.0) + 0.1 * semantic.get(doc, 0.0) for doc in ids(fused)}
    assert [hit["_rankingScore"] for hit in fused["hits"]] == pytest.approx(list(expected.values()))
    assert ids(fused) == sorted(expected, key=lambda doc: -expected[doc])


def test_hybrid_with_bm25_fuses_legs_deeper_than_the_page(cluster: RunningCluster) -> None:
    """The legs are fused over more hits than a short page asks for: the document second in both
    legs, whose sum passes each leg's first, leads at ``limit`` 1 as at ``limit`` 3."""
    docs = [
        {"id": 1, "title": "quasar nebula quasar nebula", "_vectors": {"e": [-1.0, 0.0, 0.0]}},
        {"id": 2, "title": "quasar nebula", "_vectors": {"e": [0.95, 0.31, 0.0]}},
        {"id": 3, "title": "winter", "_vectors": {"e": [1.0, 0.0, 0.0]}},
    ]
    make_index(cluster, "deeper", docs, {"embedders": RANDOM_SETTINGS["embedders"]})
    query = {"q": "quasar nebula", "vector": [1.0, 0.0, 0.0], "showRankingScore": True, **BM25}

    def answer(ratio: float, limit: int) -> dict[str, Any]:
        hybrid = {"embedder": "e", "semanticRatio": ratio}
        return search(cluster, "deeper", hybrid=hybrid, limit=limit, **query)

    assert ids(answer(0.0, 3))[0] == 1 and ids(answer(1.0, 3))[0] == 3
    page = answer(0.5, 3)
    assert ids(page)[0] == 2, "second in both legs, first once they add"
    first = answer(0.5, 1)
    assert first["hits"] == page["hits"][:1]


def test_hybrid_with_bm25_moves_the_query_vector_towards_the_best_keyword_hits(
    cluster: RunningCluster,
) -> None:
    """The vector leg searches with ``q / |q| + mean(d / |d|)`` over the first three bm25 hits that
    have an embedding (gateway/search/feedback.py): the document near the best keyword hit passes
    the one nearest the query's own vector."""
    docs: list[dict[str, Any]] = [
        {"id": 1, "title": "quasar", "_vectors": {"e": [0.0, 2.0, 0.0]}},
        {"id": 2, "title": "winter", "_vectors": {"e": [0.6, 0.8, 0.0]}},
        {"id": 3, "title": "garden", "_vectors": {"e": [1.0, -0.3, 0.0]}},
        {"id": 4, "title": "quasar light", "_vectors": {"e": None}},
    ]
    make_index(cluster, "feedback", docs, {"embedders": RANDOM_SETTINGS["embedders"]})
    query = {"q": "quasar", "showRankingScore": True, **BM25}
    keyword = {hit["id"]: hit["_rankingScore"] for hit in search(cluster, "feedback", **query)["hits"]}
    assert set(keyword) == {1, 4}
    refined = [1.0 + 0.0, 0.0 + 1.0, 0.0]  # the query's vector plus doc 1's, normalised
    norm = sum(x * x for x in refined) ** 0.5

    def similarity(vector: list[float]) -> float:
        length = sum(x * x for x in vector) ** 0.5
        return (1 + sum(a * b / norm / length for a, b in zip(vector, refined, strict=True))) / 2

    hybrid = {"embedder": "e", "semanticRatio": 0.5}
    fused = search(cluster, "feedback", vector=[3.0, 0.0, 0.0], hybrid=hybrid, retrieveVectors=True, **query)
    expected = {
        doc["id"]: 0.5 * keyword.get(doc["id"], 0.0)
        + (0.5 * similarity(doc["_vectors"]["e"]) if doc["_vectors"]["e"] else 0.0)
        for doc in docs
    }
    assert ids(fused) == sorted(expected, key=lambda doc: -expected[doc])
    assert ids(fused).index(2) < ids(fused).index(3), "near the best keyword hit, not the query"
    for hit in fused["hits"]:
        assert hit["_rankingScore"] == pytest.approx(expected[hit["id"]])
    assert fused["queryVector"] == pytest.approx([x / norm for x in refined])


def _random_search(rng: random.Random) -> dict[str, Any]:
    words = WORDS + RARE
    body: dict[str, Any] = {
        "q": " ".join(rng.choice(words) for _ in range(rng.randint(1, 14))),
        "showRankingScore": True,
        "showRankingScoreDetails": True,
        **BM25,
    }
    optional: list[tuple[float, dict[str, Any]]] = [
        (0.3, {"offset": rng.randint(0, 30), "limit": rng.randint(0, 40)}),
        (0.2, {"page": rng.randint(1, 4), "hitsPerPage": rng.randint(1, 10)}),
        (0.2, {"filter": rng.choice(["group = 2", "n > 10", "NOT group = 1"])}),
        (0.2, {"sort": [rng.choice(["n:asc", "n:desc"])]}),
        (0.2, {"facets": ["group"]}),
        (0.2, {"distinct": "group"}),
        (0.15, {"rankingScoreThreshold": round(rng.random() / 2, 2)}),
        (0.15, {"attributesToSearchOn": ["title"]}),
        (0.15, {"hybrid": {"embedder": "e", "semanticRatio": 0.5}, "vector": [0.5, -0.2, 0.1]}),
    ]
    for chance, params in optional:
        if rng.random() < chance:
            body.update(params)
    return body


def _answer(client: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    """The answer without its timing and uid; counts stay, exact even with a threshold."""
    response = client.post("/indexes/random/search", json=body)
    assert response.status_code == 200, (body, response.text)
    return {
        name: value
        for name, value in response.json().items()
        if name not in ("processingTimeMs", "requestUid")
    }


def test_one_and_three_shards_answer_alike(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    one, three = clusters
    rng = random.Random(7)
    differing, answered = [], 0
    with (
        httpx.Client(base_url=one.url, timeout=60) as first,
        httpx.Client(base_url=three.url, timeout=60) as other,
    ):
        for _ in range(80):
            body = _random_search(rng)
            expected = _answer(first, body)
            if expected != _answer(other, body):
                differing.append(str(body))
            answered += bool(expected["hits"])
    assert not differing, "\n".join(differing)
    assert answered > 40


def test_field_lengths_follow_updates_and_deletions(cluster: RunningCluster) -> None:
    """The index-wide word counts behind the length normalisation are kept up to date by every
    write: an index that saw replacements and deletions scores like one built from its final state."""
    final = [{"id": n, "text": " ".join(WORDS[: 1 + n % 7])} for n in range(12)]
    make_index(cluster, "edited", [{"id": n, "text": "filler " * (n + 3)} for n in range(20)])
    index = client_for(cluster).index("edited")
    for task in (index.add_documents(final), index.delete_documents(list(range(12, 20)))):
        assert wait_task(cluster, task.task_uid)["status"] == "succeeded"
    make_index(cluster, "fresh", final)
    for q in ("river garden", "shadow north silver", "stone"):
        edited = search(cluster, "edited", q=q, showRankingScore=True, **BM25)["hits"]
        fresh = search(cluster, "fresh", q=q, showRankingScore=True, **BM25)["hits"]
        assert edited == fresh


def test_the_best_documents_are_scored_first_past_the_record_budget(cluster: RunningCluster) -> None:
    """A score's bound reads the term's frequency and the field's length (``shard/index/impacts.py``):
    among more candidates than the record budget (2,000, shared over the shards), the best scoring
    documents are read first whatever their ids. With a bound from postings alone every candidate
    tied, the candidates were scored in id order, and the two best, added last, were left past the
    budget to rank by their estimates, which tie with every filler's ([1953, 1957] came first)."""
    filler = " ".join(FILLER)
    docs: list[dict[str, Any]] = [{"id": n, "text": f"apple {filler}"} for n in range(2400)]
    docs += [{"id": 5000, "text": "apple"}, {"id": 5001, "text": f"apple apple apple apple {filler}"}]
    make_index(cluster, "budget", docs)
    assert {hit["id"] for hit in search(cluster, "budget", q="apple", limit=2, **BM25)["hits"]} == {
        5000,
        5001,
    }


def _skewed_documents(count: int = 900, seed: int = 8) -> list[dict[str, Any]]:
    """Words from common to rare, each any number of times, in fields of any length: a document
    holding only common words may still outscore one holding a rare word once in a long field."""
    rng = random.Random(seed)
    docs = []
    for number in range(count):
        words = [rng.choice(FILLER) for _ in range(rng.randint(0, 40))]
        for word, chance in zip(WORDS[:5], (0.7, 0.4, 0.2, 0.1, 0.03), strict=True):
            if rng.random() < chance:
                words += [word] * rng.randint(1, 4)
        rng.shuffle(words)
        cut = rng.randint(1, min(5, len(words))) if words else 0
        docs.append({"id": number, "title": " ".join(words[:cut]), "body": " ".join(words[cut:])})
    return docs


@pytest.mark.parametrize("shards", [1, 3])
def test_a_page_is_the_head_of_the_whole_ranking(
    clusters: tuple[RunningCluster, RunningCluster], shards: int
) -> None:
    """A page bounds only the documents holding its rarest terms until the others' largest parts
    cannot reach the page (``bm25_order.py``); a limit past every candidate scores them all, and
    must give them best score first. The pages must be the head of that whole ranking."""
    running = clusters[0] if shards == 1 else clusters[1]
    make_index(running, "skewed", _skewed_documents(), {"searchableAttributes": ["title", "body"]})
    for q in ("river stone", "shadow river", "north light", "stone shadow light", "river north stone light"):
        answer = search(running, "skewed", q=q, limit=1000, showRankingScore=True, **BM25)
        whole = answer["hits"]
        assert len(whole) == answer["estimatedTotalHits"] > 30, q
        scores = [hit["_rankingScore"] for hit in whole]
        assert scores == sorted(scores, reverse=True), q
        for offset, limit in ((0, 5), (0, 20), (20, 10)):
            page = search(running, "skewed", q=q, offset=offset, limit=limit, showRankingScore=True, **BM25)
            assert page["hits"] == whole[offset : offset + limit], (q, offset, limit)
