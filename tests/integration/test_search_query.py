"""Query parsing and matching (search.md §7.1 to §7.3, §6.6, §6.7, §6.9, §6.10) on a real two-shard cluster.

Prefix search, typo tolerance and its settings, phrases, negation, synonyms, stop words, the 10-term rule,
split words and concatenation. Queries ending with a space switch prefix matching off (§7.1), which
isolates typo tolerance from prefix matches.
"""

from __future__ import annotations

import re
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
    update_settings,
)
from tests.support.cluster import RunningCluster


def t(*texts: str) -> list[dict[str, object]]:
    """Documents ``{"id": 1.., "t": text}`` in the given (insertion) order."""
    return [{"id": n, "t": text} for n, text in enumerate(texts, start=1)]


# --- prefix -------------------------------------------------------------------------------------------


def test_prefix_only_on_the_last_word(cluster: RunningCluster) -> None:
    make_index(cluster, "prefix", t("hello world", "help desk", "shell"))
    assert set(found(cluster, "prefix", "hel")) == {1, 2}, "§7.1: the last word is a prefix term"
    assert found(cluster, "prefix", "hel ") == [], "§7.1: a trailing space disables prefix matching"
    assert found(cluster, "prefix", "hel world") == [], "§7.2 last: the first term (not a prefix) is required"
    assert found(cluster, "prefix", "world hel") == [1]


def test_prefix_search_disabled(cluster: RunningCluster) -> None:
    make_index(cluster, "no-prefix", t("hello world", "help desk"), {"prefixSearch": "disabled"})
    assert found(cluster, "no-prefix", "hel") == [], "§6.10 prefixSearch disabled"
    assert found(cluster, "no-prefix", "hello") == [1]


# --- typo tolerance -----------------------------------------------------------------------------------


def test_min_word_size_for_typos(cluster: RunningCluster) -> None:
    docs = t("barc", "tabel", "elephent", "eliphent", "chokolade")
    make_index(cluster, "typo-size", docs)
    # §7.3 allowance by character count: < 5 ⇒ 0, < 9 ⇒ 1, else 2 (transposition = 1 typo).
    assert found(cluster, "typo-size", "bark ") == []
    # Nor as the prefix being typed (issue 19: `Uraa` found `Uraí, Uray`, `Nevo` found `Neve`).
    assert found(cluster, "typo-size", "bark") == []
    assert found(cluster, "typo-size", "table ") == [2]
    assert found(cluster, "typo-size", "elephant ") == [3], "8 chars: 1 typo, not 2"
    assert found(cluster, "typo-size", "chocolate ") == [5], "9 chars: 2 typos"
    sizes = {"oneTypo": 4, "twoTypos": 8}
    update_settings(cluster, "typo-size", {"typoTolerance": {"minWordSizeForTypos": sizes}})
    assert found(cluster, "typo-size", "bark ") == [1]
    assert found(cluster, "typo-size", "bark") == [1]
    assert found(cluster, "typo-size", "elephant ") == [3, 4], "1 typo before 2 typos"


def test_typo_on_first_letter_costs_two(cluster: RunningCluster) -> None:
    make_index(cluster, "typo-first", t("jello", "hallo", "ponderful"))
    # §7.3: a different first character costs 2 ⇒ never a 1-typo match; allowed where 2 typos are.
    assert found(cluster, "typo-first", "hello ") == [2]
    assert found(cluster, "typo-first", "wonderful ") == [3]


def test_typo_on_the_prefix(cluster: RunningCluster) -> None:
    make_index(cluster, "typo-prefix", t("iphone case", "android case"))
    assert found(cluster, "typo-prefix", "iphoe") == [1], "§7.3: typo tolerance applies to the prefix"


def test_disable_on_words(cluster: RunningCluster) -> None:
    make_index(cluster, "typo-words", t("helo", "wrld"), {"typoTolerance": {"disableOnWords": ["hello"]}})
    assert found(cluster, "typo-words", "hello ") == [], "§6.9 disableOnWords: exact match only"
    assert found(cluster, "typo-words", "world ") == [2]
    assert found(cluster, "typo-words", "helo") == [1]


def test_disable_on_attributes(cluster: RunningCluster) -> None:
    docs = [{"id": 1, "title": "helo"}, {"id": 2, "code": "helo"}, {"id": 3, "code": "hello world"}]
    make_index(cluster, "typo-attrs", docs, {"typoTolerance": {"disableOnAttributes": ["code"]}})
    # §6.9: `code` only matches without typos (exact `hello` first, typo rule).
    assert found(cluster, "typo-attrs", "hello ") == [3, 1]
    assert set(found(cluster, "typo-attrs", "hel")) == {1, 2, 3}, "prefix still allowed on exact attributes"


def test_disable_on_numbers(cluster: RunningCluster) -> None:
    docs = [{"id": 1, "sku": 123456}, {"id": 2, "sku": "lot 123456"}]
    make_index(cluster, "typo-numbers-on", docs)
    make_index(cluster, "typo-numbers-off", docs, {"typoTolerance": {"disableOnNumbers": True}})
    assert found(cluster, "typo-numbers-on", "123457 ") == [1, 2], "6 characters: 1 typo by default"
    assert found(cluster, "typo-numbers-off", "123457 ") == [], "§6.9 disableOnNumbers: numbers exact"
    assert found(cluster, "typo-numbers-off", "123456") == [1, 2]


def test_typo_tolerance_disabled(cluster: RunningCluster) -> None:
    docs = t("helo", "hello", "sunflower", "news paper")
    make_index(cluster, "typo-on", docs)
    make_index(cluster, "typo-off", docs, {"typoTolerance": {"enabled": False}})
    assert found(cluster, "typo-on", "hello ") == [2, 1]
    assert found(cluster, "typo-off", "hello ") == [2], "§6.9 enabled false: no typo derivations"
    assert set(found(cluster, "typo-off", "hel")) == {1, 2}, "prefix still works"
    assert found(cluster, "typo-off", "sun flower") == [3], "n-gram concatenation still works"
    assert found(cluster, "typo-on", "newspaper") == [4]
    assert found(cluster, "typo-off", "newspaper") == [], "no split-word derivations"


# --- split words and concatenation --------------------------------------------------------------------


def test_split_words_and_concatenation(cluster: RunningCluster) -> None:
    make_index(cluster, "ngrams", t("news paper", "sunflower", "newspaper", "sun flower"))
    # §7.1 split word: `newspaper` ⇒ phrase `news paper`, 1 typo, after the exact word (typo rule).
    assert found(cluster, "ngrams", "newspaper") == [3, 1]
    # §7.1 n-gram: `sun flower` ⇒ `sunflower`; §7.4 an n-gram of 2 words costs 2 typos: exact words first.
    assert found(cluster, "ngrams", "sun flower") == [4, 2]


# --- phrases and negation -----------------------------------------------------------------------------

PHRASE_DOCS = t("quick fox", "quick brown fox", "fox quick", "brown quick fox")


def test_phrases(cluster: RunningCluster) -> None:
    make_index(cluster, "phrase", PHRASE_DOCS)
    # §7.1: a phrase's words are consecutive (quick at position 0 before position 1: wordPosition).
    assert found(cluster, "phrase", '"quick fox"') == [1, 4]
    assert found(cluster, "phrase", '"quick fox') == [1, 4], "an unclosed quote makes the rest a phrase"
    assert found(cluster, "phrase", '"quick fo"') == [], "phrases get no prefix"
    assert found(cluster, "phrase", '"quikc fox"') == [], "phrases get no typos"
    # A hard separator inside a phrase splits it into two phrases: `brown` and `quick`.
    assert set(found(cluster, "phrase", '"brown. quick"')) == {2, 4}
    assert found(cluster, "phrase", '"brown quick"') == [4]


def test_negation(cluster: RunningCluster) -> None:
    make_index(cluster, "negation", PHRASE_DOCS)
    # §7.1: `-word` excludes documents containing the word, `-"phrase"` those containing the phrase.
    assert set(found(cluster, "negation", "fox -brown")) == {1, 3}
    assert set(found(cluster, "negation", 'fox -"quick brown"')) == {1, 3, 4}
    assert set(found(cluster, "negation", "fox -brow")) == {1, 2, 3, 4}, "negation: no prefix"
    assert set(found(cluster, "negation", "fox -quikc")) == {1, 2, 3, 4}, "negation: no typo"
    # Only negations: placeholder search (insertion order) minus the exclusions.
    body = search(cluster, "negation", q="-brown")
    assert (ids(body), body["estimatedTotalHits"]) == ([1, 3], 2)
    body = search(cluster, "negation", q='-"quick fox"')
    assert (ids(body), body["estimatedTotalHits"]) == ([2, 3], 2)


# --- synonyms -----------------------------------------------------------------------------------------


def test_synonyms(cluster: RunningCluster) -> None:
    synonyms = {"phone": ["smartphone"], "nyc": ["new york"], "big apple": ["nyc"]}
    docs = t("smartphone case", "phone case", "new york pizza", "nyc bagel", "york new bagel")
    make_index(cluster, "synonyms", docs, {"synonyms": synonyms})
    # §6.7: synonyms cost 0 typos but never count as exact ⇒ the exact word first (exactness).
    body = search(cluster, "synonyms", q="phone", showRankingScoreDetails=True)
    assert ids(body) == [2, 1]
    details = body["hits"][1]["_rankingScoreDetails"]
    assert details["typo"]["typoCount"] == 0
    assert details["exactness"]["matchType"] == "noExactMatch"
    assert found(cluster, "synonyms", "smartphone") == [1], "one-directional: key → values only"
    # A multi-word value is matched as a phrase: `york new` does not match.
    assert found(cluster, "synonyms", "nyc") == [4, 3]
    # A multi-word key is looked up by 2-word query windows.
    assert found(cluster, "synonyms", "big apple") == [4]


# --- stop words ---------------------------------------------------------------------------------------


def test_stop_words(cluster: RunningCluster) -> None:
    docs = t("the lord of the rings", "lord rings", "lord theater")
    make_index(cluster, "stop", docs, {"stopWords": ["the", "of"]})
    # §6.6: stop words are dropped from the query, except the last word (kept as a prefix term).
    assert set(found(cluster, "stop", "the lord")) == {1, 2, 3}
    assert set(found(cluster, "stop", "the lord", matchingStrategy="all")) == {1, 2, 3}
    assert found(cluster, "stop", "lord the")[0] == 3
    assert found(cluster, "stop", "lord the", matchingStrategy="all") == [3]
    assert found(cluster, "stop", "the") == [3], "stop words are not indexed; `the` prefixes `theater`"
    # Inside phrases stop words are one-position wildcards; they still consume positions in documents.
    assert found(cluster, "stop", '"lord of the rings"') == [1]
    assert found(cluster, "stop", '"lord the the rings"') == [1]
    assert found(cluster, "stop", '"lord rings"') == [2]


# --- the 10-term rule ---------------------------------------------------------------------------------


def test_only_the_first_ten_terms_are_used(cluster: RunningCluster) -> None:
    ten = "one two three four five six seven eight nine ten"
    make_index(cluster, "ten-terms", t(ten, "one two three four five six seven eight nine"))
    # §1.1: the 11th term is ignored, so `all` still matches document 1.
    assert found(cluster, "ten-terms", ten + " eleven", matchingStrategy="all") == [1]
    nine_and_eleven = "one two three four five six seven eight nine eleven"
    assert found(cluster, "ten-terms", nine_and_eleven, matchingStrategy="all") == []
    # A phrase counts as one term ⇒ `eleven` is the 10th term and must match.
    phrase_query = '"one two" three four five six seven eight nine ten eleven twelve'
    assert found(cluster, "ten-terms", phrase_query, matchingStrategy="all") == []
    # Negated words do not count ⇒ `ten` is still the 10th term, `eleven` the ignored 11th.
    assert found(cluster, "ten-terms", "-zulu " + ten + " eleven", matchingStrategy="all") == [1]


# --- parameter errors (§0, §1.1, §1.2, §8) ------------------------------------------------------------


def row(field: str, value: Any, expected: str, found: str | None = None) -> tuple[dict[str, Any], str, str]:
    """(body, code, message) for a §1.10 type error on ``field``; ``expected`` may be a whole message.

    Without ``found`` only the message's prefix is checked (marked by a trailing "…").
    """
    code = "invalid_search_" + re.sub(r"([A-Z])", r"_\1", field).lower()
    if expected.startswith(("Invalid", "Unknown", "…")):
        return {field: value}, code, expected
    head = f"Invalid value type at `.{field}`: expected {expected}"
    return {field: value}, code, f"{head}…" if found is None else f"{head}, but found {found}"


RATIO = (
    "Invalid value at `.rankingScoreThreshold`: the value of `rankingScoreThreshold` is invalid, "
    "expected a float between `0.0` and `1.0`."
)
STRATEGY = (
    "Unknown value `doggo` at `.matchingStrategy`: "
    "expected one of `last`, `all`, `frequency`, `bm25`"
)
ITEM = (
    "Invalid value type at `.attributesToRetrieve[0]`: expected a string, but found a positive integer: `1`"
)
INT, STR, BOOL, ARRAY = "a positive integer", "a string", "a boolean", "an array"

BODY_ERRORS = [
    row("q", ["doggo"], STR, 'an array: `["doggo"]`'),
    row("offset", -1, INT, "a negative integer: `-1`"),
    row("limit", "doggo", INT, 'a string: `"doggo"`'),
    row("limit", None, INT, "null"),
    row("page", "1", INT),
    row("hitsPerPage", 1.5, INT),
    row("attributesToRetrieve", "id", ARRAY),
    row("attributesToRetrieve", [1], ITEM),
    row("attributesToCrop", True, ARRAY),
    row("cropLength", "5", INT, 'a string: `"5"`'),
    row("cropMarker", 1, STR, f"{INT}: `1`"),
    row("attributesToHighlight", {"a": 1}, ARRAY),
    row("highlightPreTag", None, STR, "null"),
    row("highlightPostTag", [], STR, "an array: `[]`"),
    row("showMatchesPosition", "true", BOOL, 'a string: `"true"`'),
    row("showRankingScore", 1, BOOL, f"{INT}: `1`"),
    row("showRankingScoreDetails", "y", BOOL, 'a string: `"y"`'),
    row("showPerformanceDetails", None, BOOL, "null"),
    row("matchingStrategy", "doggo", STRATEGY),
    row("matchingStrategy", 1, "…"),
    row("attributesToSearchOn", "title", ARRAY),
    row("rankingScoreThreshold", 1.5, RATIO),
    row("rankingScoreThreshold", -0.1, RATIO),
    row("rankingScoreThreshold", "0.5", "a number"),
    row("locales", "en", ARRAY),
]


@pytest.fixture(scope="module")
def errors_index(cluster: RunningCluster) -> str:
    return make_index(cluster, "errors", t("hello world"))


def check(response: httpx.Response, code: str, expected: str) -> None:
    if expected.endswith("…"):
        assert_error(response, code, prefix=expected[:-1])
    else:
        assert_error(response, code, expected)


@pytest.mark.parametrize(("body", "code", "message"), BODY_ERRORS, ids=lambda value: str(value)[:40])
def test_body_parameter_errors(
    cluster: RunningCluster, errors_index: str, body: dict[str, Any], code: str, message: str
) -> None:
    check(search_raw(cluster, errors_index, **body), code, message)


def test_other_body_errors(cluster: RunningCluster, errors_index: str) -> None:
    response = search_raw(cluster, errors_index, locales=["xx"])
    assert_error(response, "invalid_search_locales")
    assert "`xx`" in response.json()["message"]
    response = search_raw(cluster, errors_index, limt=1)
    prefix = "Unknown field `limt`: did you mean `limit`? expected one of `q`, `offset`, `limit`"
    assert_error(response, "bad_request", prefix=prefix)
    response = httpx.post(f"{cluster.url}/indexes/{errors_index}/search", json=[])
    assert_error(response, "bad_request", "Invalid value type: expected an object, but found an array: `[]`")
    # §1.1: `null` is accepted (= absent) for the parameters typed "… | null".
    nullable = ["q", "page", "hitsPerPage", "attributesToRetrieve", "attributesToCrop"]
    nullable += ["attributesToHighlight", "attributesToSearchOn", "rankingScoreThreshold", "locales"]
    body = search(cluster, errors_index, **dict.fromkeys(nullable))
    assert (ids(body), body["limit"], body["offset"]) == ([1], 20, 0)


def unparsable(name: str, raw: str, expected: str = "as a positive integer") -> str:
    return f"Invalid value in parameter `{name}`: could not parse `{raw}` {expected}"


GET_STRATEGY = (
    "Unknown value `doggo` for parameter `matchingStrategy`: "
    "expected one of `last`, `all`, `frequency`, `bm25`"
)
GET_BOOL = "as a boolean, expected either `true` or `false`"
GET_ERRORS = [
    ({"limit": "doggo"}, "limit", unparsable("limit", "doggo")),
    ({"page": "-1"}, "page", unparsable("page", "-1")),
    ({"cropLength": "x"}, "crop_length", unparsable("cropLength", "x")),
    ({"showRankingScore": "yes"}, "show_ranking_score", unparsable("showRankingScore", "yes", GET_BOOL)),
    ({"matchingStrategy": "doggo"}, "matching_strategy", GET_STRATEGY),
    ({"rankingScoreThreshold": "2"}, "ranking_score_threshold", "…"),
    ({"rankingScoreThreshold": "abc"}, "ranking_score_threshold", "…"),
]


@pytest.mark.parametrize(("params", "code", "message"), GET_ERRORS, ids=lambda value: str(value)[:40])
def test_get_parameter_errors(
    cluster: RunningCluster, errors_index: str, params: dict[str, str], code: str, message: str
) -> None:
    check(search_get(cluster, errors_index, params), f"invalid_search_{code}", message)


def test_get_unknown_parameter(cluster: RunningCluster, errors_index: str) -> None:
    response = search_get(cluster, errors_index, {"qq": "x"})
    assert_error(response, "bad_request", prefix="Unknown parameter `qq`: ")
