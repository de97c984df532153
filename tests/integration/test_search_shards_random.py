"""Random searches answer alike on 1 and 3 shards, under default settings (no ``searchCutoffMs``).

``test_search_shards.py`` checks chosen queries; this draws searches that mix the parameters (typos,
prefixes, phrases, negations, highlight, crop, filter, sort, facets, distinct, threshold, pages) from a
fixed seed. It found 38 of 300 such searches answered differently when the per-query record budgets
were counted per shard. ``estimatedTotalHits`` is compared except with a ``rankingScoreThreshold``,
where the contract makes it an estimate over the buckets explored (search.md §1.5).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.search_support import one_and_three_shards
from tests.support.cluster import REPO_ROOT, RunningCluster

MOVIES = json.loads((REPO_ROOT.parent / "shared" / "datasets" / "movies-1688" / "movies.json").read_bytes())
SETTINGS = {
    "filterableAttributes": ["genres", "vote_average", "vote_count"],
    "sortableAttributes": ["vote_average", "title", "vote_count"],
}
SEARCHES = 150
_PUNCTUATION = ".,!?;:\"'()"


def _words() -> list[str]:
    words = []
    for movie in MOVIES[:300]:
        text = f"{movie['title']} {movie['overview']}"
        words += [word.strip(_PUNCTUATION) for word in text.split()[:12] if word.strip(_PUNCTUATION)]
    return words


def _q(rng: random.Random, words: list[str]) -> str:
    """One to four words: sometimes a typo, a quoted pair, a negated word, or cut as if still typed."""
    parts = [rng.choice(words) for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4]))]
    if parts and rng.random() < 0.3 and len(parts[0]) > 3:
        parts[0] = parts[0][:-1] if rng.random() < 0.5 else parts[0][:2] + parts[0][3:]
    if len(parts) > 1 and rng.random() < 0.15:
        parts = [f'"{parts[0]} {parts[1]}"', *parts[2:]]
    if parts and rng.random() < 0.1:
        parts.append("-" + rng.choice(words))
    q = " ".join(parts)
    return q[: rng.randint(1, len(q))] if q and rng.random() < 0.3 else q


def _search(rng: random.Random, words: list[str]) -> dict[str, Any]:
    body: dict[str, Any] = {"q": _q(rng, words), "showRankingScoreDetails": True}
    optional: list[tuple[float, dict[str, Any]]] = [
        (0.4, {"matchingStrategy": rng.choice(["last", "all", "frequency"])}),
        (0.3, {"attributesToHighlight": rng.choice([["*"], ["title"], ["overview", "cast"]])}),
        (0.2, {"attributesToCrop": ["overview:5"], "cropLength": rng.randint(1, 20)}),
        (0.2, {"showMatchesPosition": True}),
        (0.3, {"offset": rng.randint(0, 30), "limit": rng.randint(0, 40)}),
        (0.2, {"filter": rng.choice(["genres = Drama", "vote_average > 7", "NOT genres = Drama"])}),
        (0.2, {"sort": rng.choice([["vote_average:desc"], ["title:asc"], ["vote_count:asc", "title:desc"]])}),
        (0.15, {"facets": ["genres"]}),
        (0.15, {"distinct": "genres"}),
        (0.15, {"rankingScoreThreshold": round(rng.random(), 2)}),
        (0.15, {"attributesToSearchOn": rng.choice([["title"], ["overview"], ["title", "cast"]])}),
    ]
    for chance, params in optional:
        if rng.random() < chance:
            body.update(params)
    return body


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with one_and_three_shards("movies", MOVIES, SETTINGS) as pair:
        yield pair


def _answer(client: httpx.Client, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = client.post("/indexes/movies/search", json=body)
    answer = response.json()
    for varying in ("processingTimeMs", "requestUid"):
        answer.pop(varying, None)
    if "rankingScoreThreshold" in body:
        answer.pop("estimatedTotalHits", None)
    return response.status_code, answer


def test_random_searches_answer_alike_on_one_and_three_shards(
    clusters: tuple[RunningCluster, RunningCluster],
) -> None:
    one, three = clusters
    rng, words = random.Random(1), _words()
    differing, answered = [], 0
    with (
        httpx.Client(base_url=one.url, timeout=60) as first,
        httpx.Client(base_url=three.url, timeout=60) as other,
    ):
        for _ in range(SEARCHES):
            body = _search(rng, words)
            expected, got = _answer(first, body), _answer(other, body)
            assert expected[0] < 500 and got[0] < 500, (body, expected, got)
            if expected != got:
                differing.append(json.dumps(body))
            answered += expected[0] == 200 and bool(expected[1]["hits"])
    assert not differing, "\n".join(differing)
    assert answered > SEARCHES // 2  # most searches find movies: the comparison is not of empty pages
