"""The shard's vector store on a real LMDB environment: batches write vectors, ``nearest`` reads the
in-memory spaces, and a reopened store loads its checkpoint plus the journal instead of rebuilding."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pyroaring import BitMap

from shard.batches import apply_batch
from shard.index.codec import DocumentCodec
from shard.index.env import StoreEnv
from shard.vector import VectorStore, document_vectors, embedded, nearest
from shard.vector import space as space_module

SETTINGS = {"embedders": {"e": {"source": "userProvided", "dimensions": 3}}}
BINARY = {"embedders": {"b": {"source": "userProvided", "dimensions": 8, "binaryQuantized": True}}}


class Shard:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.env = StoreEnv(path)
        self.codec = DocumentCodec()
        self.vectors = VectorStore(path / "vectors")
        self.vectors.open(self.env)
        self.batches = 0

    def apply(self, *operations: dict[str, Any]) -> dict[str, Any]:
        self.batches += 1
        ops = [{"task": self.batches, "index": "i", **operation} for operation in operations]
        return apply_batch(self.env, self.codec, self.batches, ops, lambda: False, None, self.vectors)

    def add(self, docs: list[dict[str, Any]]) -> dict[str, Any]:
        entries = [[str(doc["id"]), doc, position] for position, doc in enumerate(docs)]
        return self.apply({"op": "addDocuments", "mode": "replace", "documents": entries})

    def reopen(self) -> Shard:
        """As after a crash: the spaces are not closed (checkpointed) first."""
        self.env.close()
        reopened = Shard(self.path)
        reopened.batches = self.batches  # batch uids go on (an applied uid answers from its record)
        return reopened


@pytest.fixture
def shard(tmp_path: Path) -> Iterator[Shard]:
    opened = Shard(tmp_path / "shard")
    opened.apply({"op": "updateSettings", "settings": SETTINGS})
    yield opened
    opened.env.close()


def _ids(hits: list[tuple[int, float]]) -> list[int]:
    return [doc for doc, _ in hits]


def test_nearest_scores_each_document_by_its_best_vector_within_allowed(shard: Shard) -> None:
    shard.add(
        [
            {"id": 0, "_vectors": {"e": [1, 0, 0]}},
            {"id": 1, "_vectors": {"e": [[0, 1, 0], [0.9, 0.1, 0]]}},
            {"id": 2, "_vectors": {"e": [0, 0, 5]}},
            {"id": 3, "_vectors": {"e": [2, 0, 0]}},
            {"id": 4, "_vectors": {"e": None}},
        ]
    )
    query = np.array([1, 0, 0], dtype=np.float32)
    hits = nearest(shard.vectors, 0, "e", query, 10, BitMap(range(10)))
    assert _ids(hits) == [0, 3, 1, 2], "ties (0 and 3, same direction) by doc id; 4 has no vector"
    assert hits[0][1] == pytest.approx(1.0) and hits[2][1] == pytest.approx(0.9 / np.hypot(0.9, 0.1))
    assert _ids(nearest(shard.vectors, 0, "e", query, 2, BitMap([1, 2, 3]))) == [3, 1]
    assert nearest(shard.vectors, 0, "e", query, 5, BitMap()) == []
    with shard.env.lmdb.begin() as txn:
        assert embedded(shard.env, txn, 0, "e") == BitMap([0, 1, 2, 3])
        stored = document_vectors(shard.env, txn, 0, "e", 1)
        assert stored is not None and stored.tolist() == [
            [0, 1, 0],
            [0.8999999761581421, 0.10000000149011612, 0],
        ]
        assert document_vectors(shard.env, txn, 0, "e", 4) is None


def test_deleted_and_replaced_documents_never_come_back(shard: Shard) -> None:
    shard.add([{"id": i, "_vectors": {"e": [1, i, 0]}} for i in range(5)])
    shard.apply({"op": "deleteDocuments", "ids": ["0", "1"]})
    shard.add([{"id": 2, "_vectors": {"e": [0, 0, 1]}}])
    query = np.array([1, 0, 0], dtype=np.float32)
    everything = BitMap(range(100))
    assert _ids(nearest(shard.vectors, 0, "e", query, 10, everything)) == [3, 4, 2]
    reopened = shard.reopen()
    assert reopened.vectors.loaded_from_checkpoint == {(0, "e"): 0}
    assert _ids(nearest(reopened.vectors, 0, "e", query, 10, everything)) == [3, 4, 2]


def test_reopening_replays_the_journal_past_the_checkpoint(
    shard: Shard, monkeypatch: pytest.MonkeyPatch
) -> None:
    shard.add([{"id": i, "_vectors": {"e": [1, i, 0]}} for i in range(50)])
    # the next two batches change less than a tenth of the space: journaled, not checkpointed
    shard.apply({"op": "deleteDocuments", "ids": ["3"]})
    shard.add([{"id": 7, "_vectors": {"e": [0, 0, 1]}}])
    reopened = shard.reopen()
    assert reopened.vectors.loaded_from_checkpoint == {(0, "e"): 2}
    query = np.array([0, 0, 1], dtype=np.float32)
    hits = nearest(reopened.vectors, 0, "e", query, 60, BitMap(range(100)))
    assert hits[0] == (7, pytest.approx(1.0)) and 3 not in _ids(hits) and len(hits) == 49
    reopened.apply({"op": "deleteDocuments", "ids": ["4"]})
    reopened.vectors.close()  # a clean stop checkpoints what changed
    again = reopened.reopen()
    assert again.vectors.loaded_from_checkpoint == {(0, "e"): 0}
    assert len(nearest(again.vectors, 0, "e", query, 60, BitMap(range(100)))) == 48


def test_a_checkpoint_of_a_cleared_index_is_not_taken_for_its_new_vectors(shard: Shard) -> None:
    shard.add([{"id": i, "_vectors": {"e": [1, i, 0]}} for i in range(3)])
    shard.apply({"op": "clearDocuments"})
    shard.add([{"id": 9, "_vectors": {"e": [0, 1, 0]}}])
    reopened = shard.reopen()
    query = np.array([1, 0, 0], dtype=np.float32)
    assert _ids(nearest(reopened.vectors, 0, "e", query, 10, BitMap(range(10)))) == [0]


def test_binary_quantized_vectors_score_by_hamming_in_minus_one_to_one(tmp_path: Path) -> None:
    shard = Shard(tmp_path / "binary")
    shard.apply({"op": "updateSettings", "settings": BINARY})
    shard.add(
        [
            {"id": 0, "_vectors": {"b": [1, 1, 1, 1, 1, 1, 1, 1]}},
            {"id": 1, "_vectors": {"b": [-1, -1, -1, -1, -1, -1, -1, -1]}},
            {"id": 2, "_vectors": {"b": [1, 1, 1, 1, -1, -1, -1, -1]}},
            {"id": 3, "_vectors": {"b": None}},
        ]
    )
    query = np.full(8, 0.3, dtype=np.float32)
    assert nearest(shard.vectors, 0, "b", query, 4, BitMap([0, 1, 2, 3])) == [(0, 1.0), (2, 0.0), (1, -1.0)]
    with shard.env.lmdb.begin() as txn:
        stored = document_vectors(shard.env, txn, 0, "b", 2)
        assert stored is not None and stored.tolist() == [[1, 1, 1, 1, 0, 0, 0, 0]]
    shard.env.close()


def test_the_approximate_index_answers_large_spaces_and_follows_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(space_module, "APPROXIMATE_FROM", 500)
    shard = Shard(tmp_path / "large")
    settings = {"embedders": {"e": {"source": "userProvided", "dimensions": 16}}}
    shard.apply({"op": "updateSettings", "settings": settings})
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(2000, 16)).astype(np.float32)
    shard.add([{"id": i, "_vectors": {"e": vectors[i].tolist()}} for i in range(2000)])
    space = shard.vectors.space(0, "e")
    assert space is not None and space.wait_for_graph(60) and space.ann is not None
    query = vectors[42]
    assert nearest(shard.vectors, 0, "e", query, 1, BitMap(range(2000)))[0][0] == 42
    shard.apply({"op": "deleteDocuments", "ids": ["42"]})
    assert 42 not in _ids(nearest(shard.vectors, 0, "e", query, 10, BitMap(range(2000))))
    allowed = BitMap(range(0, 2000, 10))
    hits = nearest(shard.vectors, 0, "e", query, 10, allowed)
    assert len(hits) == 10 and BitMap(_ids(hits)) <= allowed
    everything = BitMap(range(2000))
    best = nearest(shard.vectors, 0, "e", vectors[7], 10, everything)
    assert best[0][0] == 7 and best[0][1] == pytest.approx(1.0), "graph candidates, scored exactly"
    reopened = shard.reopen()
    reloaded = reopened.vectors.space(0, "e")
    # the batch after the graph was built checkpointed it: the graph is loaded, not built again
    assert reloaded is not None and reloaded.ann is not None and reloaded.ann.dead == 1
    assert _ids(nearest(reopened.vectors, 0, "e", query, 10, allowed)) == _ids(hits)
    assert nearest(reopened.vectors, 0, "e", vectors[7], 10, everything) == best
    reopened.apply({"op": "deleteDocuments", "ids": [str(i) for i in range(1000, 1600)]})
    rebuilt = reopened.vectors.space(0, "e")
    assert rebuilt is not None and rebuilt.wait_for_graph(60) and rebuilt.ann is not None
    assert rebuilt.ann.dead == 0 and len(rebuilt.ann.graph_slots) == 1399, "a quarter dead: rebuilt"
    reopened.env.close()


def test_a_graph_builds_in_the_background_and_catches_up_with_the_batches_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch crossing the threshold does not wait for the graph: searches stay exact until it is
    swapped in, and the changes of the batches applied meanwhile reach it before it is."""
    monkeypatch.setattr(space_module, "APPROXIMATE_FROM", 500)
    builds: list[Callable[[], None]] = []
    monkeypatch.setattr(space_module, "start_build", builds.append)
    shard = Shard(tmp_path / "background")
    settings = {"embedders": {"e": {"source": "userProvided", "dimensions": 16}}}
    shard.apply({"op": "updateSettings", "settings": settings})
    vectors = np.random.default_rng(2).normal(size=(1200, 16)).astype(np.float32)
    shard.add([{"id": i, "_vectors": {"e": vectors[i].tolist()}} for i in range(1000)])
    space = shard.vectors.space(0, "e")
    assert space is not None and space.ann is None and len(builds) == 1, "built later, not in the batch"
    live = BitMap(range(1000))

    def exact(query: np.ndarray, allowed: BitMap) -> list[int]:
        ids = np.array(list(allowed))
        rows = vectors[ids] / np.linalg.norm(vectors[ids], axis=1, keepdims=True)
        return ids[np.argsort(-(rows @ (query / np.linalg.norm(query))), kind="stable")][:10].tolist()

    assert _ids(nearest(shard.vectors, 0, "e", vectors[3], 10, live)) == exact(vectors[3], live)
    shard.apply({"op": "deleteDocuments", "ids": [str(i) for i in range(0, 100)]})
    shard.add([{"id": i, "_vectors": {"e": vectors[i].tolist()}} for i in range(1000, 1200)])
    live = BitMap(range(100, 1200))
    assert len(builds) == 1, "one build at a time"
    builds.pop()()  # the build ends after the two batches
    assert space.ann is not None and space.graphs == 1
    assert sorted(space.ann.node_of) == sorted(slot for slots in space.slots.values() for slot in slots)
    found = 0
    for doc in range(0, 1200, 7):
        hits = _ids(nearest(shard.vectors, 0, "e", vectors[doc], 10, live))
        assert BitMap(hits) <= live, "deleted during the build, never served"
        found += len(set(hits) & set(exact(vectors[doc], live)))
    assert found / (10 * len(range(0, 1200, 7))) >= 0.95, "recall@10 against exact search"
    shard.apply({"op": "deleteDocuments", "ids": [str(i) for i in range(100, 800)]})
    assert space.ann is None and not builds, "small again: exact, no graph"
    shard.env.close()


def test_deleting_an_index_drops_its_space_and_checkpoint(shard: Shard) -> None:
    shard.add([{"id": i, "_vectors": {"e": [1, i, 0]}} for i in range(3)])
    checkpoints = shard.path / "vectors"
    assert [path.name for path in checkpoints.iterdir()] != []
    shard.apply({"op": "deleteIndex"})
    assert shard.vectors.space(0, "e") is None
    assert list(checkpoints.iterdir()) == []
    with shard.env.lmdb.begin() as txn:
        assert all(txn.stat(db)["entries"] == 0 for db in shard.env.vector_tables)


def test_an_unreadable_checkpoint_is_rebuilt_from_lmdb(shard: Shard) -> None:
    shard.add([{"id": i, "_vectors": {"e": [1, i, 0]}} for i in range(3)])
    (checkpoint_file,) = (shard.path / "vectors").iterdir()
    checkpoint_file.write_bytes(b"not a checkpoint")
    reopened = shard.reopen()
    assert reopened.vectors.loaded_from_checkpoint == {}
    query = np.array([1, 0, 0], dtype=np.float32)
    assert _ids(nearest(reopened.vectors, 0, "e", query, 10, BitMap(range(10)))) == [0, 1, 2]
    reopened.env.close()
