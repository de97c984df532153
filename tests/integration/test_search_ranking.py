"""Bucket-sort ranking (search.md §7.2, §7.4, §6.1) on small crafted indexes, on a real two-shard cluster.

Each test states the expected order of its hits and justifies it from the contract. Documents of a test
share every rule except the one under test, so that the order cannot come from another rule; the words
of the crafted data avoid accidental typo, prefix, n-gram and stem matches.
"""

from __future__ import annotations

from typing import Any

from tests.integration.search_support import found, ids, make_index, search, update_settings
from tests.support.cluster import RunningCluster

DEFAULT_RULES = ["words", "typo", "proximity", "attributeRank", "sort", "wordPosition", "exactness"]


def t(*texts: str) -> list[dict[str, object]]:
    """Documents ``{"id": 1.., "t": text}`` in the given (insertion) order."""
    return [{"id": n, "t": text} for n, text in enumerate(texts, start=1)]


def by_order(details: dict[str, dict[str, object]]) -> list[str]:
    """The rule names of ``_rankingScoreDetails`` by their ``order``, which must be 0, 1, 2…"""
    names = sorted(details, key=lambda name: int(str(details[name]["order"])))
    assert [details[name]["order"] for name in names] == list(range(len(names))), details
    return names


# --- ties ---------------------------------------------------------------------------------------------


def test_ties_keep_insertion_order_on_every_shard(cluster: RunningCluster) -> None:
    # §7.4 "Ties after all rules": documents added earlier come first, whatever their id or shard.
    first = [{"id": key, "t": "same words here"} for key in ("k", "c", "x", "a", "q", "m")]
    make_index(cluster, "ties", first)
    later = [{"id": key, "t": "same words here"} for key in ("b", "z")]
    make_index(cluster, "ties", later)
    expected = ["k", "c", "x", "a", "q", "m", "b", "z"]
    assert found(cluster, "ties", "same") == expected
    assert found(cluster, "ties", "same words here") == expected
    assert ids(search(cluster, "ties", limit=100)) == expected, "placeholder: insertion order"
    assert ids(search(cluster, "ties", q="same", offset=3, limit=3)) == expected[3:6]


# --- typo ---------------------------------------------------------------------------------------------


def test_typo_fewer_typos_first(cluster: RunningCluster) -> None:
    docs = t("wondrfl cake", "wonderfl cake", "wonderful cake", "helo there", "hello there")
    make_index(cluster, "typo-rank", docs)
    # §7.3: `wonderful` has 9 chars ⇒ 2 typos allowed; typo rule: 0 typos < 1 typo < 2 typos.
    assert found(cluster, "typo-rank", "wonderful") == [3, 2, 1]
    # §7.4 typo: exact `hello` above the 1-typo `helo` (inserted earlier).
    assert found(cluster, "typo-rank", "hello") == [5, 4]


# --- words / matchingStrategy -------------------------------------------------------------------------


def test_matching_strategy_last_and_all(cluster: RunningCluster) -> None:
    make_index(cluster, "words", t("alpha", "alpha beta", "alpha beta gamma", "beta gamma", "gamma"))
    body = search(cluster, "words", q="alpha beta gamma")
    # §7.2 last: all three terms, then `alpha beta`, then `alpha` alone; docs without `alpha` never qualify.
    assert ids(body) == [3, 2, 1]
    assert body["estimatedTotalHits"] == 3, "§1.5: documents matching the most relaxed query (alpha)"
    body = search(cluster, "words", q="alpha beta gamma", matchingStrategy="all")
    # §7.2 all: every term must match.
    assert (ids(body), body["estimatedTotalHits"]) == ([3], 1)


def test_matching_strategy_frequency(cluster: RunningCluster) -> None:
    docs = [
        {"id": "d", "t": "common"},
        {"id": "b", "t": "common medium"},
        {"id": "g", "t": "rare"},
        {"id": "c", "t": "medium rare"},
        {"id": "a", "t": "common medium rare"},
        {"id": "e", "t": "common"},
        {"id": "f", "t": "medium"},
        {"id": "h", "t": "common"},
    ]
    # common: 5 documents, medium: 4, rare: 3.
    make_index(cluster, "freq", docs)
    q = "common medium rare"
    body = search(cluster, "freq", q=q, matchingStrategy="frequency")
    # §7.2 frequency: drop the most frequent term first: {all} ⇒ a, {medium rare} ⇒ c, {rare} ⇒ g.
    assert (ids(body), body["estimatedTotalHits"]) == (["a", "c", "g"], 3)
    body = search(cluster, "freq", q=q)
    # §7.2 last: {all} ⇒ a, {common medium} ⇒ b, {common} ⇒ d, e, h (ties: insertion order).
    assert (ids(body), body["estimatedTotalHits"]) == (["a", "b", "d", "e", "h"], 5)
    body = search(cluster, "freq", q=q, matchingStrategy="all")
    assert (ids(body), body["estimatedTotalHits"]) == (["a"], 1)
    # §7.2 frequency: terms matching nothing are dropped first.
    assert set(found(cluster, "freq", "zzyzx rare", matchingStrategy="frequency")) == {"g", "c", "a"}
    # §7.2 last: the first term alone is the smallest accepted query.
    assert found(cluster, "freq", "zzyzx rare") == []


BOOKS = t(
    "a french book about cooking",
    "the french book",
    "book about french history",
    "about nothing at all",
    "french cooking book about bread",
    "french book club about wine and cheese",
)


def words_details(body: dict[str, Any]) -> list[tuple[Any, int, int]]:
    return [
        (
            hit["id"],
            hit["_rankingScoreDetails"]["words"]["matchingWords"],
            hit["_rankingScoreDetails"]["words"]["maxMatchingWords"],
        )
        for hit in body["hits"]
    ]


def test_phrases_are_never_dropped(cluster: RunningCluster) -> None:
    make_index(cluster, "phrase-words", BOOKS)
    # §7.2 last and frequency: free words are dropped, phrases never, so the phrase alone qualifies
    # (2: `the french book`), below the documents that also match `about` (1, 6); 3 and 5 hold the
    # words but not the phrase. The words rule counts a phrase's words, as the reference does.
    for strategy in ("last", "frequency"):
        body = search(
            cluster,
            "phrase-words",
            q='"french book" about',
            matchingStrategy=strategy,
            showRankingScoreDetails=True,
        )
        assert words_details(body) == [(1, 3, 3), (6, 3, 3), (2, 2, 3)], strategy
        assert body["estimatedTotalHits"] == 3
    body = search(cluster, "phrase-words", q='"french book" about cooking', showRankingScoreDetails=True)
    assert words_details(body) == [(1, 4, 4), (6, 3, 4), (2, 2, 4)]
    # The phrase may come last: `about` is still the word that goes.
    assert found(cluster, "phrase-words", 'about "french book"') == [1, 6, 2]
    # Two phrases: nothing can be dropped.
    assert found(cluster, "phrase-words", '"french book" "about cooking"') == [1]
    body = search(cluster, "phrase-words", q='"french book" about', matchingStrategy="all")
    assert (ids(body), body["estimatedTotalHits"]) == ([1, 6], 2)
    # A phrase's stop words are not counted: `the french book` is 2 words, with `about` 3.
    make_index(cluster, "phrase-stop", BOOKS, {"stopWords": ["the", "a"]})
    body = search(cluster, "phrase-stop", q='"the french book" about', showRankingScoreDetails=True)
    assert words_details(body) == [(1, 3, 3), (6, 3, 3), (2, 2, 3)]


# --- proximity ----------------------------------------------------------------------------------------


def test_proximity_adjacent_reversed_gapped_and_other_attribute(cluster: RunningCluster) -> None:
    docs = [
        {"id": 1, "t": "quick brown lazy fox"},
        {"id": 4, "t": "quick", "u": "fox"},
        {"id": 2, "t": "fox quick"},
        {"id": 3, "t": "quick fox"},
    ]
    make_index(cluster, "prox", docs)
    # §7.4 proximity cost: adjacent 0 < reversed 1 < gap of 2 words (distance 3) 2 < other attribute 3.
    assert found(cluster, "prox", "quick fox") == [3, 2, 1, 4]


def test_proximity_precision_by_attribute(cluster: RunningCluster) -> None:
    docs = [
        {"id": "gap", "t": "quick brown lazy fox"},
        {"id": "split", "t": "quick", "u": "fox"},
        {"id": "adjacent", "t": "quick fox"},
    ]
    rules = ["words", "proximity"]
    make_index(cluster, "prox-word", docs, {"rankingRules": rules})
    make_index(cluster, "prox-attr", docs, {"rankingRules": rules, "proximityPrecision": "byAttribute"})
    # byWord: cost 0 < cost 2 < cost 3 (different attributes).
    assert found(cluster, "prox-word", "quick fox") == ["adjacent", "gap", "split"]
    # §6.10 byAttribute: same attribute (cost 0, a tie kept in insertion order) vs not (max).
    assert found(cluster, "prox-attr", "quick fox") == ["gap", "adjacent", "split"]


def test_proximity_next_to_a_phrase_counts_only_query_order(cluster: RunningCluster) -> None:
    make_index(cluster, "prox-phrase", t("book about", "about book"))

    def proximity(q: str) -> list[tuple[object, object]]:
        body = search(cluster, "prox-phrase", q=q, showRankingScoreDetails=True)
        return [(hit["id"], hit["_rankingScoreDetails"]["proximity"]["score"]) for hit in body["hits"]]

    # Two words: reversed order costs 1 (3/4). Beside a phrase (the reference's behaviour, which the
    # contract does not detail) a reversed pair is as far as it gets: 1/4, on either side of the phrase.
    assert proximity("about book") == [(2, 1.0), (1, 0.75)]
    assert proximity('about "book"') == [(2, 1.0), (1, 0.25)]
    assert proximity('"about" book') == [(2, 1.0), (1, 0.25)]


# --- attributeRank / wordPosition ---------------------------------------------------------------------


def test_attribute_rank_follows_searchable_attributes(cluster: RunningCluster) -> None:
    docs = [{"id": 1, "title": "banana", "body": "apple"}, {"id": 2, "title": "apple", "body": "banana"}]
    make_index(cluster, "attr-ranked", docs, {"searchableAttributes": ["title", "body"]})
    make_index(cluster, "attr-star", docs)
    # §7.4 attributeRank: a match in the first searchable attribute ranks above one in the second.
    assert found(cluster, "attr-ranked", "apple") == [2, 1]
    # §1.1 attributesToSearchOn: its order is irrelevant, weights stay those of searchableAttributes.
    assert found(cluster, "attr-ranked", "apple", attributesToSearchOn=["body", "title"]) == [2, 1]
    # §6.2 `*`: every attribute has weight 0; every later rule ties too ⇒ insertion order.
    assert found(cluster, "attr-star", "apple") == [1, 2]


def test_word_position_earlier_is_better(cluster: RunningCluster) -> None:
    make_index(cluster, "position", t("red green apple", "red apple", "apple pie"))
    # §7.4 wordPosition: position 0 (cost 0) < position 1 (cost 1) < position 2 (cost 2).
    assert found(cluster, "position", "apple") == [3, 2, 1]


def test_word_position_counts_the_first_occurrence(cluster: RunningCluster) -> None:
    """A word at positions 0 and 3 is at 0; a prefix's words count the earliest of them."""
    docs = t("green apple", "apple red red apple", "red apricot", "red red applesauce apple")
    make_index(cluster, "first-place", docs)
    assert found(cluster, "first-place", "apple") == [2, 1, 4]
    assert found(cluster, "first-place", "ap") == [2, 1, 3, 4]


# --- exactness ----------------------------------------------------------------------------------------


def test_exactness_equal_before_starts_with(cluster: RunningCluster) -> None:
    make_index(cluster, "exact-start", t("green apple pie", "green apple"))
    # §7.4 exactness: attribute equal to the query (2) before attribute starting with it (1).
    assert found(cluster, "exact-start", "green apple") == [2, 1]
    # Without the position rules: equal (3) > starts with the query (2) > the rest (1).
    docs = t("big green apple", "green apple pie", "green apple")
    make_index(cluster, "exact-tiers", docs, {"rankingRules": ["words", "exactness"]})
    assert found(cluster, "exact-tiers", "green apple") == [3, 2, 1]


def test_exactness_exact_word_before_prefix(cluster: RunningCluster) -> None:
    make_index(cluster, "exact-words", t("big red applesauce", "big red apple"))
    # §7.4 exactness 3): neither starts with the query; 2 words matched exactly beat 1 exact + 1 prefix.
    assert found(cluster, "exact-words", "red apple") == [2, 1]


def test_exactness_compares_the_kept_terms(cluster: RunningCluster) -> None:
    make_index(cluster, "exact-kept", t("the french book", "the book", "book about french history"))

    def match_types(q: str) -> list[tuple[object, object]]:
        body = search(cluster, "exact-kept", q=q, showRankingScoreDetails=True)
        return [(hit["id"], hit["_rankingScoreDetails"]["exactness"]["matchType"]) for hit in body["hits"]]

    # §7.2 last drops `cooking`: exactness then compares an attribute with what the words rule kept
    # (`the book`, `book about`), as the reference does, not with the whole query.
    assert match_types("the book cooking") == [(2, "exactMatch"), (1, "noExactMatch")]
    assert match_types('"book about" cooking') == [(3, "matchesStart")]


# --- configured rule lists ----------------------------------------------------------------------------


def test_custom_rule_order_changes_results(cluster: RunningCluster) -> None:
    docs = [
        {"id": "title-match", "title": "big red apple", "body": "plain"},
        {"id": "body-exact", "title": "nothing", "body": "red apple"},
    ]
    make_index(cluster, "custom-rules", docs, {"searchableAttributes": ["title", "body"]})
    # Default rules: attributeRank (title) comes before exactness.
    assert found(cluster, "custom-rules", "red apple") == ["title-match", "body-exact"]
    rules = ["exactness", "words", "typo", "proximity", "attributeRank", "wordPosition"]
    update_settings(cluster, "custom-rules", {"rankingRules": rules})
    # exactness first: the body equal to the query wins (both match the 2 words, §7.4 implicit words).
    assert found(cluster, "custom-rules", "red apple") == ["body-exact", "title-match"]
    update_settings(cluster, "custom-rules", {"rankingRules": None})
    assert found(cluster, "custom-rules", "red apple") == ["title-match", "body-exact"]


def test_legacy_attribute_rule_alone(cluster: RunningCluster) -> None:
    docs = [
        {"id": 1, "title": "zz", "body": "apple"},
        {"id": 2, "title": "zz zz apple", "body": "zz"},
        {"id": 3, "title": "apple", "body": "zz"},
    ]
    settings = {"searchableAttributes": ["title", "body"], "rankingRules": ["attribute"]}
    make_index(cluster, "legacy-attr", docs, settings)
    # §7.4 attribute = attributeRank then wordPosition: title before body, earlier position first.
    body = search(cluster, "legacy-attr", q="apple", showRankingScoreDetails=True)
    assert ids(body) == [3, 2, 1]
    details = body["hits"][0]["_rankingScoreDetails"]
    # §1.6: the legacy rule has its own entry; the split rules are not executed.
    fields = {"order", "attributeRankingOrderScore", "queryWordDistanceScore", "score"}
    assert set(details["attribute"]) == fields
    assert "attributeRank" not in details and "wordPosition" not in details
    assert "typo" not in details and "proximity" not in details and "exactness" not in details


def test_words_rule_removed_with_matching_strategy_all(cluster: RunningCluster) -> None:
    make_index(cluster, "all-details", t("alpha beta", "beta alpha"))
    body = search(
        cluster, "all-details", q="alpha beta", matchingStrategy="all", showRankingScoreDetails=True
    )
    # §7.2 all: the words rule is removed from ranking ⇒ no `words` entry; the others keep their order.
    assert ids(body) == [1, 2]
    assert by_order(body["hits"][0]["_rankingScoreDetails"]) == [
        "typo",
        "proximity",
        "attributeRank",
        "wordPosition",
        "exactness",
    ]
    body = search(cluster, "all-details", q="alpha beta", showRankingScoreDetails=True)
    # §1.6: sort rules appear only when the query sorts.
    assert by_order(body["hits"][0]["_rankingScoreDetails"]) == [r for r in DEFAULT_RULES if r != "sort"]
