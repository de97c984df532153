"""Split words on indexes where their halves are common, and symbols after a letter (search.md §7.1;
issue 24 items 4 and 6).

A joined query word (``dont``, ``atrain``) matches its two halves written next to each other. Adjacency
is read from token records under a budget; these indexes hold more than a thousand documents where
the halves meet apart, which is where a split used to be dropped whole, or cut where the halves are
most common instead of where they stand together most often.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.search_support import found, make_index, search
from tests.support.cluster import RunningCluster

FILLERS = 1_500


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster(shards=1) as running:
        yield running


def test_contraction_typed_without_apostrophe_where_its_halves_are_common(cluster: RunningCluster) -> None:
    # `don` and `t` meet in 1,500 documents, never next to each other: `dont` still finds `Don't`.
    docs = [{"id": k, "title": f"Story {k}", "text": "Don bought a T-shirt"} for k in range(FILLERS)]
    docs += [
        {"id": FILLERS, "title": "Don't Look Up", "text": "two astronomers"},
        {"id": FILLERS + 1, "title": "Quiet days", "text": "I don't know why"},
    ]
    make_index(cluster, "dont", docs, {"searchableAttributes": ["title", "text"]})
    assert found(cluster, "dont", "dont") == [FILLERS, FILLERS + 1]
    assert found(cluster, "dont", "dont look up")[0] == FILLERS


def test_split_where_the_halves_stand_together_most_often(cluster: RunningCluster) -> None:
    # `at` and `rain` meet in 2,000 documents and stand together in two (the first ones); `a` and
    # `train` meet in four and stand together in three: `atrain` is `a train`. (Counting adjacent pairs
    # in the first 1,000 documents and scaling by 2,000 / 1,000 made `at rain` win, 4 to 3.)
    docs = [{"id": k, "text": "wet at rain time"} for k in range(2)]
    docs += [{"id": k, "text": "rain fell at noon"} for k in range(2, 2_000)]
    first = len(docs)
    docs += [{"id": first + k, "text": f"a train number {k}"} for k in range(3)]
    docs += [{"id": first + 3, "text": "a slow goods train"}]
    make_index(cluster, "atrain", docs)
    body = search(cluster, "atrain", q="atrain", limit=10, attributesToHighlight=["text"])
    assert [hit["id"] for hit in body["hits"]] == [first, first + 1, first + 2]
    assert body["hits"][0]["_formatted"]["text"] == "<em>a train</em> number 0"


def test_symbols_after_a_letter_are_separators_as_on_the_reference(cluster: RunningCluster) -> None:
    # `#` and `+` separate words, as on the reference engine (checked on it): `c#`, `c++` and `c` are
    # the same query, finding every document holding the word `c`, in insertion order; a one-letter
    # word is no prefix when a separator follows it (`can't` is not found).
    docs = [
        {"id": 1, "text": "C# programming in depth"},
        {"id": 2, "text": "C++ templates explained"},
        {"id": 3, "text": "The C language"},
        {"id": 4, "text": "you can't stop"},
    ]
    make_index(cluster, "symbols", docs)
    for query in ("c#", "c++", "c #"):
        assert found(cluster, "symbols", query) == [1, 2, 3], query
    assert found(cluster, "symbols", "c") == [1, 2, 3, 4]
