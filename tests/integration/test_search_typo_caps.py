"""Typo caps are index-wide (issue 19): a lookup keeps per typo count the first words in key order of
the whole index's vocabulary (150 with one typo, 50 with two), so one shard and three shards derive the
same words. The vocabulary here holds every one-typo variant of `sanga` (about 230, first letter kept),
one document each, and two-typo variants of `tarantula`: more than the caps on one shard, about a third
of them on each of three shards."""

from __future__ import annotations

import string
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from common.typo_caps import ONE_TYPO_LIMIT, TWO_TYPOS_LIMIT
from tests.integration.search_support import one_and_three_shards, search
from tests.support.cluster import RunningCluster

INDEX = "typo-caps"


def one_typo_variants(word: str) -> set[str]:
    """Words one edit from ``word`` that keep its first letter (a changed first letter costs two)."""
    found: set[str] = set()
    for at in range(1, len(word) + 1):
        for letter in string.ascii_lowercase:
            found.add(word[:at] + letter + word[at:])  # insertion
            if at < len(word):
                found.add(word[:at] + letter + word[at + 1 :])  # substitution
        if at < len(word):
            found.add(word[:at] + word[at + 1 :])  # deletion
        if at < len(word) - 1:
            found.add(word[:at] + word[at + 1] + word[at] + word[at + 2 :])  # transposition
    found.discard(word)
    return found


def two_typo_variants(word: str) -> set[str]:
    """Two substitutions, neither of the first letter."""
    found = {
        word[:i] + a + word[i + 1 : j] + b + word[j + 1 :]
        for i in range(1, len(word))
        for j in range(i + 1, len(word))
        for a in "xz"
        for b in "qj"
    }
    return {variant for variant in found if variant != word}


WORDS = sorted(one_typo_variants("sanga") | {"sanga"} | two_typo_variants("tarantula") | {"tarantula"})
DOCS = [
    {"id": number, "name": word, "kind": "city" if number % 2 else "town"}
    for number, word in enumerate(WORDS)
]
SETTINGS = {"filterableAttributes": ["kind"], "pagination": {"maxTotalHits": 5000}}


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with one_and_three_shards(INDEX, DOCS, SETTINGS) as running:
        yield running


def answer(cluster: RunningCluster, **params: Any) -> tuple[list[Any], int, Any]:
    body = search(cluster, INDEX, limit=5000, facets=["kind"], **params)
    return [hit["id"] for hit in body["hits"]], body["estimatedTotalHits"], body["facetDistribution"]


@pytest.mark.parametrize("q", ["sanga ", "sanga", "sanga tarantula", "tarantula "])
@pytest.mark.parametrize("strategy", ["last", "frequency"])
def test_one_and_three_shards_derive_the_same_words(
    clusters: tuple[RunningCluster, RunningCluster], q: str, strategy: str
) -> None:
    one, three = clusters
    expected = answer(one, q=q, matchingStrategy=strategy)
    assert answer(three, q=q, matchingStrategy=strategy) == expected


def test_the_caps_hold_over_the_index(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    assert len(one_typo_variants("sanga")) > 1.5 * ONE_TYPO_LIMIT
    for cluster in clusters:
        # The word itself, then the first 150 one-typo words in key order.
        ids, total, _ = answer(cluster, q="sanga ")
        assert total == 1 + ONE_TYPO_LIMIT
        assert (
            sorted(WORDS[number] for number in ids[1:]) == sorted(one_typo_variants("sanga"))[:ONE_TYPO_LIMIT]
        )
        ids, total, _ = answer(cluster, q="tarantula ")
        assert total == 1 + TWO_TYPOS_LIMIT  # no one-typo word in the vocabulary


def test_federated_and_facet_search_see_the_same_words(
    clusters: tuple[RunningCluster, RunningCluster],
) -> None:
    one, three = clusters
    federated = {
        "federation": {"facetsByIndex": {INDEX: ["kind"]}, "limit": 500},
        "queries": [
            {"indexUid": INDEX, "q": "sanga "},
            {"indexUid": INDEX, "q": "tarantula ", "matchingStrategy": "frequency"},
        ],
    }
    facet = {"facetName": "kind", "q": "sanga "}
    answers = []
    for cluster in (one, three):
        body = httpx.post(f"{cluster.url}/multi-search", json=federated, timeout=30).json()
        facets = httpx.post(f"{cluster.url}/indexes/{INDEX}/facet-search", json=facet, timeout=30).json()
        answers.append(
            (
                [hit["id"] for hit in body["hits"]],
                body["estimatedTotalHits"],
                body["facetsByIndex"][INDEX]["distribution"],
                facets["facetHits"],
            )
        )
    assert answers[0] == answers[1]
    assert answers[0][1] == 2 + ONE_TYPO_LIMIT + TWO_TYPOS_LIMIT
