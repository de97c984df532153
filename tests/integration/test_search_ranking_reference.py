"""Ranking details the contract leaves open, settled by the reference engine (search.md §7.4).

Each case comes from a query of the differential benchmark (``bench/differential.py``) where Sift
ordered the same hits differently; the crafted documents isolate the rule computation at fault, and
the expected order is the reference engine's answer on the same documents.
"""

from __future__ import annotations

import itertools
import string
from typing import Any

import pytest

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


def test_proximity_through_a_common_prefix_counts_only_query_order(cluster: RunningCluster) -> None:
    # The reference keeps pair tables for prefixes of at most 4 letters starting 100 words or more:
    # through such a prefix, a reversed pair counts only with the prefix's own word (`q alpha`).
    filler = ["q" + "".join(letters) for letters in itertools.product(string.ascii_lowercase, repeat=2)]
    docs = t("qzz alpha", "alpha x y qzy", "q alpha")
    for uid, words in (("prox-prefix-common", 200), ("prox-prefix-rare", 40)):
        make_index(cluster, uid, docs + [{"id": 100 + n, "t": word} for n, word in enumerate(filler[:words])])
    assert scored(cluster, "prox-prefix-common", "alpha q", "proximity") == [(3, 0.75), (2, 0.5), (1, 0.25)]
    # 40 words: `qzz` before `alpha` is a reversed pair like any other.
    assert scored(cluster, "prox-prefix-rare", "alpha q", "proximity") == [(3, 0.75), (1, 0.75), (2, 0.5)]


# --- exactness ----------------------------------------------------------------------------------------

START, NONE = "matchesStart", "noExactMatch"


@pytest.mark.parametrize(
    ("uid", "texts", "q", "expected"),
    [
        # `bet` (typed on the way to `beta`) is no indexed word: only `alpha` is checked, at position 0.
        ("exact-typed", ("alpha x beta", "x alpha beta"), "alpha bet", {1: START, 2: NONE}),
        # `gammx` matches `gamma` with a typo, so it drops out; `beta` after it is a hole: no start.
        ("exact-hole", ("alpha gamma beta", "alpha gamma"), "alpha gammx beta ", {1: NONE, 2: START}),
    ],
)
def test_exactness_checks_the_leading_words_that_match_exactly(
    cluster: RunningCluster, uid: str, texts: tuple[str, ...], q: str, expected: dict[int, str]
) -> None:
    make_index(cluster, uid, t(*texts))
    assert dict(scored(cluster, uid, q, "exactness")) == expected


def test_exactness_skips_a_word_matched_with_a_typo(cluster: RunningCluster) -> None:
    # In the 1-typo bucket `tonya` matched as `tonys`: `iota` alone is what `t` must equal.
    make_index(cluster, "exact-typo", [{"id": 1, "t": "iota", "u": "tonys"}, {"id": 2, "t": "tonya"}])
    for q in ("iota tonya", "iota tonya "):
        assert scored(cluster, "exact-typo", q, "exactness") == [(1, "exactMatch")]


def test_exactness_positions_in_any_attribute_words_in_one(cluster: RunningCluster) -> None:
    # Each word must stand at its query position in some attribute (`the` 0 in `t`, `b` 1 in `u`)
    # and one attribute must hold them all (`v`, of two words: equal). Without `v`, nothing starts.
    docs = [{"id": 1, "t": "the x", "u": "plan b c", "v": "b the"}, {"id": 2, "t": "the x", "u": "plan b c"}]
    make_index(cluster, "exact-spread", docs)
    assert dict(scored(cluster, "exact-spread", "the b", "exactness")) == {1: "exactMatch", 2: "noExactMatch"}


# --- wordPosition -------------------------------------------------------------------------------------


def test_word_position_of_a_phrase_is_where_its_first_word_first_appears(cluster: RunningCluster) -> None:
    # A phrase (quoted, or a split word: `newspaper` as `news paper`) counts where its first word
    # first appears, in any attribute: at 0 in the first and third documents, at 5 in the second.
    docs = [
        {"id": 1, "t": "news x y z w v news paper"},
        {"id": 2, "t": "x y z w v news paper"},
        {"id": 3, "t": "news", "u": "x y z w v news paper"},
    ]
    make_index(cluster, "position-phrase", docs)
    for q in ('"news paper"', "newspaper "):
        assert scored(cluster, "position-phrase", q, "wordPosition") == [(1, 1.0), (3, 1.0), (2, 8 / 11)]


def test_word_position_and_exactness_of_a_concatenation_follow_its_path(cluster: RunningCluster) -> None:
    # The differential's `tell in` found `telling` (the 2-gram `tellin` as a prefix) in documents also
    # holding `in` elsewhere. A document lacking `sun` matches `sun flower` only through `sunflower`:
    # its `flower` elsewhere is then neither an earlier position nor an exact word (the reference
    # ranks `flower x sunflower` with `x y sunflower z garden`), and the concatenation's later term
    # counts one place further on (`x sunflower`: 1 + 2 of 21, as `telling` one word later).
    docs = t(
        "sunflower",
        "x sunflower",
        "sunflowers field",
        "sun flower",
        "flower sun",
        "sunflower garden",
        "garden sunflower",
        "sunflower x garden",
        "sun flower garden",
        "x y sunflower z garden",
        "flower x sunflower",
    )
    make_index(cluster, "ngram-path", docs)
    positions = scored(cluster, "ngram-path", "sun flower", "wordPosition")
    assert [doc for doc, _ in positions] == [4, 9, 5, 1, 3, 6, 8, 2, 7, 10, 11]
    assert positions[7:] == [(2, 18 / 21), (7, 18 / 21), (10, 17 / 21), (11, 17 / 21)]
    body = search(cluster, "ngram-path", q="sun flower", showRankingScoreDetails=True, limit=100)
    exact = {hit["id"]: hit["_rankingScoreDetails"]["exactness"].get("matchingWords") for hit in body["hits"]}
    assert exact[11] == 0, "`flower` is not matched on its own"
    # A 2-gram of the query's second and third words, and past position 16 (coarse buckets).
    later = t("garden sunflower", "garden aa sunflower", "aa sunflower garden")
    make_index(cluster, "ngram-path-later", later)
    assert scored(cluster, "ngram-path-later", "garden sun flower", "wordPosition") == [
        (1, 30 / 31),
        (2, 28 / 31),
        (3, 28 / 31),
    ]
    filler = " ".join(f"w{letter}" for letter in string.ascii_lowercase[:16])
    make_index(cluster, "ngram-path-far", t(f"{filler} sunflower", f"{filler} w sunflower"))
    assert scored(cluster, "ngram-path-far", "sun flower", "wordPosition") == [(1, 8 / 21), (2, 8 / 21)]
