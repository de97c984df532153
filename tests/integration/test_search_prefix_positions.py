"""A short prefix's first page is ranked by word position over every candidate of a large index.

A one- to three-letter query matches thousands of documents, far more than a query may score
from their token records (2,000 over the index); the word position rule must still put the documents
where a word starting with the prefix comes earliest first, as the ranking rules say, never leave them
in insertion order (``skipped``). The prefixes table's position levels (``shard/index/prefixes.py``)
give it with bitmaps, and follow every addition, update and deletion.
"""

from __future__ import annotations

from typing import Any

from tests.integration.search_support import ids, search
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

CROWD = 12_000
FILLERS = ["north", "south", "east", "west", "river", "lake", "hill", "stone", "field", "wood", "sea", "bay"]
GAPS = (2, 5, 8, 12)
"""Where the crowd's ``ab…`` word stands, by id modulo 4: word position levels 2, 3, 4 and 5 (3,000
documents each)."""
LEVEL = CROWD // 4
UID = "prefix-positions"


def crowd() -> list[dict[str, Any]]:
    """The crowd, inserted first, then three documents with the word second."""
    docs: list[dict[str, Any]] = [
        {"id": n, "name": " ".join(FILLERS[: GAPS[(n - 1) % 4]]) + f" ab{n}"} for n in range(1, CROWD + 1)
    ]
    better = ["north abbey", "lake abacus", "west abc"]
    return docs + [{"id": CROWD + k, "name": name} for k, name in enumerate(better, start=1)]


def first_page(cluster: RunningCluster, q: str, **params: Any) -> dict[str, Any]:
    return search(cluster, UID, q=q, limit=10, showRankingScoreDetails=True, **params)


def test_a_short_prefix_ranks_every_candidate_by_word_position(cluster: RunningCluster) -> None:
    index = client_for(cluster).index(UID)
    for task in (
        index.update_settings({"pagination": {"maxTotalHits": 20_000}}),
        index.add_documents(crowd()),
    ):
        assert wait_task(cluster, task.task_uid, timeout=600)["status"] == "succeeded"
    by_level = [list(range(first, first + 16, 4)) for first in (1, 2, 3, 4)]
    better = [CROWD + k for k in range(1, 4)]
    for q in ("ab", "a", "AB"):
        body = first_page(cluster, q)
        assert ids(body) == better + list(range(1, 28, 4)), q
        assert "skipped" not in str([hit["_rankingScoreDetails"] for hit in body["hits"]])
        assert body["estimatedTotalHits"] == CROWD + 3
    # Deeper, each level of the crowd in turn.
    for level, expected in enumerate(by_level):
        assert ids(search(cluster, UID, q="ab", offset=3 + LEVEL * level, limit=4)) == expected

    # Kept in step with the documents: an update moves a document up (keeping its insertion place
    # among its equals), a deletion takes one out.
    assert wait_task(cluster, index.add_documents([{"id": 8, "name": "stone abyss"}]).task_uid)["status"] == (
        "succeeded"
    )
    assert wait_task(cluster, index.delete_document(CROWD + 2).task_uid)["status"] == "succeeded"
    assert ids(first_page(cluster, "ab"))[:6] == [8, CROWD + 1, CROWD + 3, 1, 5, 9]  # 8 keeps its place
    assert ids(search(cluster, UID, q="ab", offset=3 + 3 * LEVEL, limit=3)) == [4, 12, 16]
