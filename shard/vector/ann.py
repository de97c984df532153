"""The approximate index of a large space: a faiss HNSW graph over 8-bit scalar-quantised rows, whose
candidates the space re-scores exactly from its float rows.

HNSW rather than IVF (bench/vectors.py and the figures in its commit): on weakly clustered data IVF
needs most of its lists probed (100k 384-d, Gaussian clusters with noise twice their spread: recall@10
0.67 at 24 of 316 lists, 0.85 at 96 in 3.3 ms), where HNSW answers 0.98 in 0.4 ms. A graph cannot
remove nodes: a removed or replaced row's node is marked dead (``graph_slots`` -1) and left out by
the selector, and the graph is rebuilt once a quarter of its nodes are dead (``Space.settle``).
Graph node i holds slot ``graph_slots[i]``.
"""

from __future__ import annotations

import faiss
import numpy as np

NEIGHBOURS = 32
"""Graph links per node (HNSW ``M``)."""
SEARCH_DEPTH = 128
"""``efSearch``: candidates kept while walking the graph (recall@10 0.98 on the weakly clustered
100k set, 0.99 on the clustered one)."""
TRAINING_SAMPLE = 40_000
"""Rows the scalar quantiser's ranges are trained on."""
DEAD_SHARE = 0.25
"""Past this share of dead nodes the graph is rebuilt."""


class ApproximateIndex:
    def __init__(self, index: faiss.Index, graph_slots: np.ndarray) -> None:
        self.index = index
        self.graph_slots = graph_slots
        """Graph node -> the slot it holds, -1 once removed."""
        self.node_of: dict[int, int] = {
            int(slot): node for node, slot in enumerate(graph_slots.tolist()) if slot >= 0
        }
        self.dead = int(np.count_nonzero(graph_slots < 0))

    @classmethod
    def build(cls, rows: np.ndarray, slots: np.ndarray) -> ApproximateIndex:
        """Train the quantiser on a seeded sample of ``rows`` (normalised), then link them all."""
        count, dimensions = rows.shape
        index = faiss.index_factory(dimensions, f"HNSW{NEIGHBOURS},SQ8", faiss.METRIC_INNER_PRODUCT)
        sample = rows
        if count > TRAINING_SAMPLE:
            sample = rows[np.random.default_rng(0).choice(count, TRAINING_SAMPLE, replace=False)]
        index.train(np.ascontiguousarray(sample))
        index.add(np.ascontiguousarray(rows))
        return cls(index, slots.astype(np.int64))

    @property
    def stale(self) -> bool:
        return self.dead > DEAD_SHARE * max(1, len(self.graph_slots))

    def add(self, rows: np.ndarray, slots: list[int]) -> None:
        first = len(self.graph_slots)
        self.index.add(np.ascontiguousarray(rows, dtype=np.float32))
        self.graph_slots = np.concatenate([self.graph_slots, np.asarray(slots, dtype=np.int64)])
        for offset, slot in enumerate(slots):
            self.node_of[slot] = first + offset

    def remove(self, slots: list[int]) -> None:
        for slot in slots:
            node = self.node_of.pop(slot, None)
            if node is not None:
                self.graph_slots[node] = -1
                self.dead += 1

    def candidates(self, q: np.ndarray, mask: np.ndarray, wanted: int) -> np.ndarray:
        """Up to ``wanted`` slots among those ``mask`` allows, nearest first by their quantised rows."""
        live = self.graph_slots >= 0
        allowed = np.zeros(len(self.graph_slots), dtype=bool)
        allowed[live] = mask[self.graph_slots[live]]
        bits = np.packbits(allowed, bitorder="little")
        selector = faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(bits))
        depth = max(SEARCH_DEPTH, wanted)
        params = faiss.SearchParametersHNSW(sel=selector, efSearch=depth)  # type: ignore[attr-defined]
        _, nodes = self.index.search(q.reshape(1, -1), wanted, params=params)
        found: np.ndarray = self.graph_slots[nodes[0][nodes[0] >= 0]]
        return found[found >= 0]

    def serialize(self) -> np.ndarray:
        data: np.ndarray = faiss.serialize_index(self.index)
        return data

    @classmethod
    def deserialize(cls, data: np.ndarray, graph_slots: np.ndarray) -> ApproximateIndex:
        return cls(faiss.deserialize_index(data), graph_slots.astype(np.int64))
