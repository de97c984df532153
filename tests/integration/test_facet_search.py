"""Facet search normalisation (search.md §3.1) on 1 and 3 shards, against hits computed here.

The query and the values are compared in the analyser's form of searchable words (``Ängel`` ->
``angel``, ``Straße`` -> ``straße``, ``Ørsted`` -> ``ørsted``), also on fields with a
``localizedAttributes`` rule; a match is a prefix of the whole value, with typos by the query's
byte length. Hits keep the filter's values (``Ängel`` and ``angel`` stay two), spelt as stored.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.integration.facet_support import expected_hits, search_form
from tests.integration.search_support import make_index, search
from tests.support.client import client_for
from tests.support.cluster import REPO_ROOT, RunningCluster

NAMES = [
    "Ängel", "angel", "ANGELA", "Ångström", "Straße", "Strasse Nord", "Ørsted", "Œuvre", "oeuvres",
    "Éclair", "eclairs", "Ἀθῆναι", "ガイド", "カイト", "Zoë",
]  # fmt: skip


def _docs() -> list[dict[str, Any]]:
    rng = random.Random(11)
    docs = []
    for i in range(120):
        names = rng.sample(NAMES, rng.randint(1, 2))
        docs.append(
            {"id": i, "name": names, "titre": rng.choice(NAMES), "color": rng.choice(["red", "blue"])}
        )
    return docs


DOCS = _docs()
SETTINGS = {
    "filterableAttributes": ["name", "titre", "color"],
    "localizedAttributes": [{"attributePatterns": ["titre"], "locales": ["fra", "jpn"]}],
}


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with RunningCluster(shards=1) as one, RunningCluster(shards=3) as three:
        for running in (one, three):
            make_index(running, "names", DOCS, SETTINGS)
        yield one, three


def _within_prefix(query: str, typos: int) -> Callable[[str], bool]:
    """Whether some prefix of a value is within ``typos`` Damerau edits (adjacent swaps) of ``query``."""

    def distance(a: str, b: str) -> int:
        rows = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
        for i in range(1, len(a) + 1):
            for j in range(1, len(b) + 1):
                rows[i][j] = min(
                    rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + (a[i - 1] != b[j - 1])
                )
                if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                    rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
        return rows[len(a)][len(b)]

    return lambda value: any(distance(query, value[:end]) <= typos for end in range(len(value) + 1))


def _keep(query: str) -> Callable[[str], bool]:
    """§3.1 with default typo settings: 1 typo from 5 bytes, 2 from 9."""
    form = search_form(query)
    size = len(form.encode())
    return _within_prefix(form, 2 if size >= 9 else 1 if size >= 5 else 0)


@pytest.mark.parametrize("field", ["name", "titre"])
@pytest.mark.parametrize(
    "query", ["ang", "ANG", "stra", "STRASSE", "ør", "oeu", "ecl", "ΑΘ", "ガ", "zoe", "angle"]
)
def test_facet_query_matches_the_analysers_form(
    clusters: tuple[RunningCluster, RunningCluster], field: str, query: str
) -> None:
    expected = expected_hits(DOCS, field, _keep(query))
    assert expected, "every query finds something"
    for running in clusters:
        body = client_for(running).index("names").facet_search(field, query)
        assert body["facetHits"] == expected
        assert body["facetQuery"] == query


def test_diacritics_fold_as_the_words_do(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    """The examples spelt out: what the analyser maps to a word starting with the query."""
    for running in clusters:
        index = client_for(running).index("names")
        found = {hit["value"] for hit in index.facet_search("name", "ang")["facetHits"]}
        assert found == {"Ängel", "angel", "ANGELA", "Ångström"}
        spaced = index.facet_search("name", "strasse no")["facetHits"]
        assert [hit["value"] for hit in spaced] == ["Strasse Nord"]
        assert [hit["value"] for hit in index.facet_search("titre", "ørs")["facetHits"]] == ["Ørsted"]
        assert index.facet_search("titre", "ors")["facetHits"] == []  # ø is no o on the reference either
        # voiced kana keep their mark, as in searchable words
        assert [hit["value"] for hit in index.facet_search("name", "ガ")["facetHits"]] == ["ガイド"]


def test_filters_keep_their_own_values(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    """Facet search folds diacritics; filter equality still tells ``Ängel`` from ``angel``."""
    expected = sum(1 for doc in DOCS if "angel" in doc["name"])
    assert expected < sum(1 for doc in DOCS if {"angel", "Ängel"} & set(doc["name"]))
    for running in clusters:
        assert search(running, "names", filter='name = "angel"', limit=0)["estimatedTotalHits"] == expected


BOOKS = REPO_ROOT.parent / "shared" / "datasets" / "sdk-fixtures" / "docs-books.json"


def test_a_small_index_reports_0_ms(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    """Client snapshot tests expect ``processingTimeMs: 0`` from a facet search on a small index, as the
    reference answers. It counts the engine's work once the search holds its slot, the gateway's and
    the slowest shard's, not the time the messages spend between processes (before: 1-4 ms)."""
    books = json.loads(BOOKS.read_bytes())
    for running in clusters:
        make_index(running, "books", books, {"filterableAttributes": ["genres"]})
        index = client_for(running).index("books")
        assert index.facet_search("genres", "fi")["facetHits"] == [{"value": "Fiction", "count": 11}]
        times = [index.facet_search("genres", "fi")["processingTimeMs"] for _ in range(21)]
        assert statistics.median(times) == 0, times
