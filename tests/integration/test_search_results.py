"""The search response (search.md §1.4 to §1.6, §7.5, §7.8) on a real two-shard cluster.

Retrieval, highlighting, cropping, match positions, pagination and ``maxTotalHits``, relevancy scores and
their details, and the GET variant.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.integration.search_support import (
    assert_error,
    fold,
    found,
    ids,
    make_index,
    search,
    search_get,
    search_raw,
)
from tests.support.cluster import RunningCluster

BODY = "one two three four five six seven coffee eight nine ten eleven twelve"
CAFE = {
    "id": 1,
    "title": "Café au lait",
    "body": BODY,
    "price": 42,
    "tags": ["hot coffee", "milk"],
    "shop": {"name": "coffee shop", "city": "Paris", "rank": 3},
    "sizes": [1, 2],
    "open": True,
}
TEA = {"id": 2, "title": "Green tea", "body": "a calm drink", "price": 7, "tags": ["tea"], "open": False}


@pytest.fixture(scope="module")
def fmt(cluster: RunningCluster) -> str:
    return make_index(cluster, "fmt", [CAFE, TEA])


def first(cluster: RunningCluster, index: str, **params: Any) -> dict[str, Any]:
    hits = search(cluster, index, **params)["hits"]
    assert hits, params
    hit: dict[str, Any] = hits[0]
    return hit


# --- retrieval ----------------------------------------------------------------------------------------


def test_attributes_to_retrieve_and_displayed_attributes(cluster: RunningCluster, fmt: str) -> None:
    assert first(cluster, fmt, q="coffee") == CAFE, "§1.6: the document, without _formatted unless asked"
    # §1.1: dotted paths select nested fields; unknown names are ignored.
    hit = first(cluster, fmt, q="coffee", attributesToRetrieve=["shop.name", "id", "nope"])
    assert hit == {"id": 1, "shop": {"name": "coffee shop"}}
    assert first(cluster, fmt, q="coffee", attributesToRetrieve=["*"]) == CAFE
    make_index(cluster, "displayed", [CAFE], {"displayedAttributes": ["id", "title"]})
    # Always intersected with displayedAttributes.
    assert first(cluster, "displayed", q="coffee") == {"id": 1, "title": "Café au lait"}
    assert first(cluster, "displayed", q="coffee", attributesToRetrieve=["id", "body"]) == {"id": 1}


def test_attributes_to_search_on(cluster: RunningCluster) -> None:
    docs = [
        {"id": 1, "title": "coffee", "body": "tea", "other": "coffee time"},
        {"id": 2, "title": "tea", "body": "coffee"},
        {"id": 3, "other": "coffee"},
    ]
    make_index(cluster, "search-on", docs, {"searchableAttributes": ["body", "title"]})
    assert set(found(cluster, "search-on", "coffee")) == {1, 2}
    assert found(cluster, "search-on", "coffee", attributesToSearchOn=["title"]) == [1]
    assert found(cluster, "search-on", "coffee", attributesToSearchOn=["body"]) == [2]
    assert found(cluster, "search-on", "coffee", attributesToSearchOn=["ti*"]) == [1], "§1.1: patterns"
    assert set(found(cluster, "search-on", "coffee", attributesToSearchOn=["*"])) == {1, 2}
    # §1.1: non-searchable attributes are highlighted too.
    hit = first(cluster, "search-on", q="coffee", attributesToSearchOn=["title"], attributesToHighlight=["*"])
    assert hit["_formatted"]["other"] == "<em>coffee</em> time"
    # §1.9: a name that is neither searchable nor user-listed.
    message = (
        "Index `search-on`: Attribute `other` is not searchable. "
        "Available searchable attributes are: `body, title`."
    )
    response = search_raw(cluster, "search-on", q="coffee", attributesToSearchOn=["other"])
    assert_error(response, "invalid_search_attributes_to_search_on", message)
    response = search_get(cluster, "search-on", {"q": "coffee", "attributesToSearchOn": "title,other"})
    assert_error(response, "invalid_search_attributes_to_search_on", message)


# --- highlighting and cropping ------------------------------------------------------------------------


def test_highlight(cluster: RunningCluster, fmt: str) -> None:
    hit = first(cluster, fmt, q="cafe", attributesToHighlight=["title"])
    formatted = hit["_formatted"]
    # §1.6: all retrieved fields plus the highlighted ones; every number leaf becomes a string.
    assert formatted["title"] == "<em>Café</em> au lait"
    assert (formatted["id"], formatted["price"], formatted["sizes"]) == ("1", "42", ["1", "2"])
    assert formatted["shop"] == {"name": "coffee shop", "city": "Paris", "rank": "3"}
    assert formatted["open"] is True
    assert {key: value for key, value in hit.items() if key != "_formatted"} == CAFE
    # §7.8: a prefix match highlights the first k characters of the word.
    assert first(cluster, fmt, q="caf", attributesToHighlight=["title"])["_formatted"]["title"] == (
        "<em>Caf</em>é au lait"
    )
    # A phrase is highlighted as one span.
    assert first(cluster, fmt, q='"au lait"', attributesToHighlight=["title"])["_formatted"]["title"] == (
        "Café <em>au lait</em>"
    )


def test_highlight_star_and_custom_tags(cluster: RunningCluster, fmt: str) -> None:
    params = {"attributesToHighlight": ["*"], "highlightPreTag": "[", "highlightPostTag": "]"}
    hit = first(cluster, fmt, q="coffee", attributesToRetrieve=["id"], **params)
    # §1.1: `*` means every displayed attribute, not limited by attributesToRetrieve.
    assert {key for key in hit if key != "_formatted"} == {"id"}
    formatted = hit["_formatted"]
    assert set(formatted) == set(CAFE)
    assert formatted["body"] == BODY.replace("coffee", "[coffee]")
    assert formatted["tags"] == ["hot [coffee]", "milk"]
    assert formatted["shop"]["name"] == "[coffee] shop"
    assert formatted["title"] == "Café au lait"
    bare = {"highlightPreTag": "", "highlightPostTag": ""}
    empty = first(cluster, fmt, q="coffee", attributesToHighlight=["tags"], **bare)
    assert empty["_formatted"]["tags"] == ["hot coffee", "milk"]


def test_crop(cluster: RunningCluster, fmt: str) -> None:
    def cropped(q: str, attribute: str = "body", **params: Any) -> str:
        value: str = first(cluster, fmt, q=q, **params)["_formatted"][attribute]
        return value

    # §7.8: grow around the match, left first: seven, eight, six, nine; markers where text was cut.
    assert cropped("coffee", attributesToCrop=["body"], cropLength=5) == "…six seven coffee eight nine…"
    assert cropped("coffee", attributesToCrop=["body:3"], cropLength=5) == "…seven coffee eight…"
    assert cropped("coffee", attributesToCrop=["body:x"], cropLength=3) == "…seven coffee eight…"
    both = {"attributesToCrop": ["body"], "attributesToHighlight": ["body"], "cropLength": 3}
    assert cropped("coffee", **both) == "…seven <em>coffee</em> eight…"
    three = {"attributesToCrop": ["body"], "cropLength": 3}
    assert cropped("coffee", **three, cropMarker="[..]") == "[..]seven coffee eight[..]"
    assert cropped("coffee", **three, cropMarker="") == "seven coffee eight"
    # Default cropLength is 10 words.
    default = "…three four five six seven coffee eight nine ten eleven…"
    assert cropped("coffee", attributesToCrop=["body"]) == default
    # No match: the first N words; shorter values are returned whole; cropLength 0: no cropping.
    assert cropped("milk", attributesToCrop=["body"], cropLength=3) == "one two three…"
    assert cropped("coffee", "title", attributesToCrop=["title"], cropLength=5) == "Café au lait"
    assert cropped("coffee", attributesToCrop=["body"], cropLength=0) == BODY


def test_matches_position(cluster: RunningCluster, fmt: str) -> None:
    def positions(q: str) -> dict[str, Any]:
        value: dict[str, Any] = first(cluster, fmt, q=q, showMatchesPosition=True)["_matchesPosition"]
        return value

    # §1.6: byte offsets of the original text (`é` is 2 bytes); `indices` for leaves inside arrays.
    assert positions("lait") == {"title": [{"start": 9, "length": 4}]}
    assert positions("cafe") == {"title": [{"start": 0, "length": 5}]}
    assert positions("caf") == {"title": [{"start": 0, "length": 3}]}, "a prefix covers only the prefix"
    assert positions('"au lait"') == {"title": [{"start": 6, "length": 7}]}, "a phrase is one entry"
    assert positions("milk") == {"tags": [{"start": 0, "length": 4, "indices": [1]}]}
    assert positions("42") == {"price": [{"start": 0, "length": 2}]}
    assert positions("coffee") == {
        "body": [{"start": BODY.index("coffee"), "length": 6}],
        "tags": [{"start": 4, "length": 6, "indices": [0]}],
        "shop.name": [{"start": 0, "length": 6}],
    }
    assert "_matchesPosition" not in first(cluster, fmt, q="coffee")


# --- response shape and GET ---------------------------------------------------------------------------


def test_response_shape(cluster: RunningCluster, fmt: str) -> None:
    body = search(cluster, fmt, q=" coffee ")
    # §1.4: keys in serialization order; `query` echoed as given, not trimmed.
    keys = ["hits", "query", "processingTimeMs", "limit", "offset", "estimatedTotalHits", "requestUid"]
    assert list(body) == keys
    assert body["query"] == " coffee "
    assert isinstance(body["processingTimeMs"], int) and not isinstance(body["processingTimeMs"], bool)
    assert (body["limit"], body["offset"], body["estimatedTotalHits"]) == (20, 0, 1)
    paged = search(cluster, fmt, q="coffee", page=1)
    assert list(paged) == [*keys[:3], "hitsPerPage", "page", "totalPages", "totalHits", "requestUid"]
    assert search(cluster, fmt)["query"] == ""


def test_get_with_comma_separated_lists_equals_post(cluster: RunningCluster, fmt: str) -> None:
    post = search(
        cluster,
        fmt,
        q="coffee",
        attributesToRetrieve=["id", "title", "shop.name"],
        attributesToHighlight=["title", "tags"],
        attributesToCrop=["body"],
        cropLength=3,
        showMatchesPosition=True,
        showRankingScore=True,
        attributesToSearchOn=["body", "tags"],
        matchingStrategy="all",
        limit=5,
    )
    params = {
        "q": "coffee",
        "attributesToRetrieve": "id,title,shop.name",
        "attributesToHighlight": "title,tags",
        "attributesToCrop": "body",
        "cropLength": "3",
        "showMatchesPosition": "true",
        "showRankingScore": "true",
        "attributesToSearchOn": "body,tags",
        "matchingStrategy": "all",
        "limit": "5",
    }
    response = search_get(cluster, fmt, params)
    assert response.status_code == 200, response.text
    got = response.json()
    for volatile in ("processingTimeMs", "requestUid"):
        post.pop(volatile)
        got.pop(volatile)
    assert got == post
    assert ids(got) == [1] and got["hits"][0]["_formatted"]["body"] == "…seven coffee eight…"


# --- pagination and maxTotalHits ----------------------------------------------------------------------

ITEMS = [{"id": n, "t": f"item {n}"} for n in range(12)]


def test_offset_limit_and_pages(cluster: RunningCluster) -> None:
    make_index(cluster, "pages", ITEMS)
    everything = ids(search(cluster, "pages", q="item", limit=100))
    assert everything == list(range(12)), "ties: insertion order"
    body = search(cluster, "pages", q="item", offset=2, limit=3)
    assert (ids(body), body["offset"], body["limit"], body["estimatedTotalHits"]) == ([2, 3, 4], 2, 3, 12)
    assert search(cluster, "pages", q="item", limit=0)["hits"] == []
    body = search(cluster, "pages", q="item", page=2, hitsPerPage=5)
    assert ids(body) == [5, 6, 7, 8, 9]
    assert (body["page"], body["hitsPerPage"], body["totalPages"], body["totalHits"]) == (2, 5, 3, 12)
    assert "offset" not in body and "estimatedTotalHits" not in body
    body = search(cluster, "pages", q="item", page=3, hitsPerPage=5, offset=0, limit=100)
    assert ids(body) == [10, 11], "offset/limit are ignored in page mode"
    # §1.1: page 0 ⇒ no hits but totals; hitsPerPage 0 ⇒ no hits, totalPages 0; hitsPerPage alone ⇒ page 1.
    body = search(cluster, "pages", q="item", page=0, hitsPerPage=5)
    assert (body["hits"], body["page"], body["totalPages"], body["totalHits"]) == ([], 0, 3, 12)
    body = search(cluster, "pages", q="item", hitsPerPage=0)
    assert (body["hits"], body["totalPages"], body["totalHits"]) == ([], 0, 12)
    body = search(cluster, "pages", q="item", hitsPerPage=4)
    assert (ids(body), body["page"], body["totalPages"]) == ([0, 1, 2, 3], 1, 3)
    body = search(cluster, "pages", page=2)
    assert (ids(body), body["hitsPerPage"], body["totalPages"]) == ([], 20, 1)


def test_max_total_hits_caps_the_window_not_the_counts(cluster: RunningCluster) -> None:
    make_index(cluster, "capped", ITEMS, {"pagination": {"maxTotalHits": 5}, "filterableAttributes": ["id"]})
    # §1.5: offset' = min(offset, M), limit' = min(limit, M - offset'). The counts are not capped: the
    # contract recommended capping them and flagged it uncertain (§10); the reference's default
    # pipeline reports every candidate (issue 19), and clients follow it, so this test did too.
    body = search(cluster, "capped", q="item")
    assert (ids(body), body["limit"], body["estimatedTotalHits"]) == ([0, 1, 2, 3, 4], 20, 12)
    body = search(cluster, "capped", q="item", offset=3, limit=10)
    assert (ids(body), body["offset"], body["limit"]) == ([3, 4], 3, 10)
    assert search(cluster, "capped", q="item", offset=7)["hits"] == []
    assert ids(search(cluster, "capped", q="item", limit=1500)) == [0, 1, 2, 3, 4]
    body = search(cluster, "capped", q="item", page=3, hitsPerPage=2)
    assert (ids(body), body["totalHits"], body["totalPages"]) == ([4], 12, 6)
    assert search(cluster, "capped", q="item", page=4, hitsPerPage=2)["hits"] == [], "past M: no hits"
    assert search(cluster, "capped")["estimatedTotalHits"] == 12, "placeholder: every document"
    assert search(cluster, "capped", filter="id >= 3")["estimatedTotalHits"] == 9, "what the filter keeps"
    # Distinct counts the candidates its page's hits leave (each id its own value: all of them).
    body = search(cluster, "capped", q="item", distinct="id", page=1)
    assert (len(body["hits"]), body["totalHits"]) == (5, 12)
    # With a threshold too: once M candidates passed it, a shard counts the rest without scoring them.
    body = search(cluster, "capped", q="item", distinct="id", rankingScoreThreshold=0.1, limit=1)
    assert body["estimatedTotalHits"] == 12


# --- relevancy scores ---------------------------------------------------------------------------------


def test_scores_fold_per_rule_ranks(cluster: RunningCluster) -> None:
    docs = [
        {"id": "first-only", "t": "hello"},
        {"id": "gap-2", "t": "hello big fat world"},
        {"id": "reversed", "t": "world hello"},
        {"id": "adjacent", "t": "hello world"},
    ]
    make_index(cluster, "score-prox", docs, {"rankingRules": ["words", "proximity"]})
    body = search(cluster, "score-prox", q="hello world", showRankingScore=True, showRankingScoreDetails=True)
    assert ids(body) == ["adjacent", "reversed", "gap-2", "first-only"]
    # §7.5: words (2,2) then proximity m = 1 + 3: cost 0 ⇒ 4, reversed cost 1 ⇒ 3, distance 3 cost 2 ⇒ 2;
    # words (1,2) then a proximity without cost.
    expected = [fold([(2, 2), (4, 4)]), fold([(2, 2), (3, 4)]), fold([(2, 2), (2, 4)]), 0.5]
    assert [hit["_rankingScore"] for hit in body["hits"]] == pytest.approx(expected)
    words = [hit["_rankingScoreDetails"]["words"] for hit in body["hits"]]
    assert words[0] == {"order": 0, "matchingWords": 2, "maxMatchingWords": 2, "score": 1.0}
    assert words[3] == {"order": 0, "matchingWords": 1, "maxMatchingWords": 2, "score": 0.5}
    assert body["hits"][1]["_rankingScoreDetails"]["proximity"] == {"order": 1, "score": 0.75}

    docs = [
        {"id": "two-typos", "title": "zz", "body": "wondrfl"},
        {"id": "body-typo", "title": "zz", "body": "wondrful"},
        {"id": "title-typo", "title": "wondrful", "body": "zz"},
        {"id": "body-exact", "title": "zz", "body": "wonderful"},
        {"id": "title-exact", "title": "wonderful", "body": "zz"},
    ]
    settings = {"rankingRules": ["words", "typo", "attributeRank"], "searchableAttributes": ["title", "body"]}
    make_index(cluster, "score-typo", docs, settings)
    body = search(cluster, "score-typo", q="wonderful", showRankingScore=True, showRankingScoreDetails=True)
    assert ids(body) == ["title-exact", "body-exact", "title-typo", "body-typo", "two-typos"]
    # words (1,1); typo m = 2 + 1 (9 chars ⇒ 2 typos, and a 2-typo match exists in the index);
    # attributeRank m = 1 + 1 (two searchable attributes).
    expected = [fold([(1, 1), (typo, 3), (rank, 2)]) for typo in (3, 2) for rank in (2, 1)]
    expected.append(fold([(1, 1), (1, 3), (1, 2)]))
    assert [hit["_rankingScore"] for hit in body["hits"]] == pytest.approx(expected)
    typo = body["hits"][3]["_rankingScoreDetails"]["typo"]
    assert typo == {"order": 1, "typoCount": 1, "maxTypoCount": 2, "score": pytest.approx(2 / 3)}
    assert body["hits"][3]["_rankingScoreDetails"]["attributeRank"] == {"order": 2, "score": 0.5}


def test_ranking_score_threshold(cluster: RunningCluster) -> None:
    texts = ("hello", "hello big fat world", "world hello", "hello world")
    docs = [{"id": n, "t": text} for n, text in enumerate(texts)]
    make_index(cluster, "threshold", docs, {"rankingRules": ["words", "proximity"]})
    # Scores (see above): 3 ⇒ 1.0, 2 ⇒ 0.875, 1 ⇒ 0.75, 0 ⇒ 0.5.
    body = search(cluster, "threshold", q="hello world", rankingScoreThreshold=0.7)
    assert (ids(body), body["estimatedTotalHits"]) == ([3, 2, 1], 3)
    assert all("_rankingScore" not in hit for hit in body["hits"]), "forces scoring, shows nothing"
    body = search(cluster, "threshold", q="hello world", rankingScoreThreshold=0.8, page=1)
    assert (ids(body), body["totalHits"]) == ([3, 2], 2)
    assert ids(search(cluster, "threshold", q="hello world", rankingScoreThreshold=1.0)) == [3]
    assert len(search(cluster, "threshold", q="hello world", rankingScoreThreshold=0.0)["hits"]) == 4


def test_score_details_shape_and_monotone_scores(cluster: RunningCluster) -> None:
    rng = random.Random(7)
    vocabulary = ["red", "green", "blue", "apple", "lemon", "grape", "round", "juicy"]
    docs = [{"id": n, "t": " ".join(rng.choices(vocabulary, k=rng.randint(1, 6)))} for n in range(40)]
    make_index(cluster, "scores", [{"id": "exact", "t": "red apple"}, *docs])
    shown = {"showRankingScore": True, "showRankingScoreDetails": True}
    body = search(cluster, "scores", q="red apple", limit=100, **shown)
    scores = [hit["_rankingScore"] for hit in body["hits"]]
    assert scores == sorted(scores, reverse=True), "§7.5: scores follow bucket order"
    assert all(0.0 <= score <= 1.0 for score in scores)
    top = body["hits"][0]
    assert (top["id"], top["_rankingScore"]) == ("exact", 1.0)
    details = top["_rankingScoreDetails"]
    # §1.6: one entry per executed rule (no sort rule without a sort), `order` = evaluation rank.
    assert details == {
        "words": {"order": 0, "matchingWords": 2, "maxMatchingWords": 2, "score": 1.0},
        "typo": {"order": 1, "typoCount": 0, "maxTypoCount": details["typo"]["maxTypoCount"], "score": 1.0},
        "proximity": {"order": 2, "score": 1.0},
        "attributeRank": {"order": 3, "score": 1.0},
        "wordPosition": {"order": 4, "score": 1.0},
        "exactness": {"order": 5, "matchType": "exactMatch", "score": 1.0},
    }
    for hit in body["hits"]:
        exactness = hit["_rankingScoreDetails"]["exactness"]
        extra = {"matchingWords", "maxMatchingWords"} if exactness["matchType"] == "noExactMatch" else set()
        assert set(exactness) == {"order", "matchType", "score"} | extra
        assert exactness["matchType"] in ("exactMatch", "matchesStart", "noExactMatch")
    # §7.5: placeholder search ⇒ 1.0 and no relevancy rule in the details.
    placeholder = search(cluster, "scores", **shown)
    assert {hit["_rankingScore"] for hit in placeholder["hits"]} == {1.0}
    assert all(hit["_rankingScoreDetails"] == {} for hit in placeholder["hits"])
    assert all("_rankingScore" not in hit for hit in search(cluster, "scores", q="red")["hits"])
