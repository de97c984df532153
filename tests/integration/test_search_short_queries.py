"""A short query's first page is ranked over every candidate, not only the first few thousand.

One or two letters match thousands of documents, more than the per-query record budget (2,000 over
the index); word position and exactness must still find, among all of them, the documents whose
field is the word or starts with it (the reference's order, measured on ``cities``: ``a`` gives the
places whose admin code is ``A`` first, then those whose name starts with the word ``a``).
"""

from __future__ import annotations

from tests.integration.search_support import found, make_index, search
from tests.support.cluster import RunningCluster

CROWD = 2_996
"""Documents matching ``ab`` as a prefix at their name's second word, inserted first: more than the
record budget, so that the better documents inserted after them are past it."""


def crowded(*better: dict[str, object]) -> list[dict[str, object]]:
    """The crowd, then the ``better`` documents (ids from ``CROWD + 1`` on)."""
    docs: list[dict[str, object]] = [{"id": n, "name": f"north ab{n}"} for n in range(1, CROWD + 1)]
    return docs + [{"id": CROWD + n, **doc} for n, doc in enumerate(better, start=1)]


def test_word_position_and_exactness_rank_every_candidate_of_a_short_prefix(cluster: RunningCluster) -> None:
    better = ({"name": "abbey"}, {"name": "ab road"}, {"name": "xx", "code": "AB"}, {"name": "Ab"})
    make_index(cluster, "short-crowd", crowded(*better))
    hits = found(cluster, "short-crowd", "ab")
    # A field equal to the word (insertion order between them), one starting with it, one starting
    # with a word it prefixes, then the crowd, its word second, in insertion order.
    assert hits[:6] == [2999, 3000, 2998, 2997, 1, 2]
    body = search(cluster, "short-crowd", q="ab", limit=4, showRankingScoreDetails=True)
    kinds = [hit["_rankingScoreDetails"]["exactness"]["matchType"] for hit in body["hits"]]
    assert kinds == ["exactMatch", "exactMatch", "matchesStart", "noExactMatch"]
    assert body["hits"][3]["_rankingScoreDetails"]["exactness"]["matchingWords"] == 0
    assert body["estimatedTotalHits"] == CROWD + 4
    # Further down, in any case, the crowd (all alike: the word second, no exact word) in insertion order.
    assert found(cluster, "short-crowd", "AB", offset=4)[:3] == [1, 2, 3]


def test_attribute_rank_splits_every_candidate_of_a_short_prefix(cluster: RunningCluster) -> None:
    # With ranked searchable attributes, `code` (weight 0) first, then the name's buckets as above.
    better = ({"name": "abbey"}, {"name": "ab road"}, {"name": "Ab"}, {"name": "xx", "code": "AB"})
    make_index(cluster, "short-ranked", crowded(*better), {"searchableAttributes": ["code", "name"]})
    assert found(cluster, "short-ranked", "ab")[:6] == [3000, 2999, 2998, 2997, 1, 2]
