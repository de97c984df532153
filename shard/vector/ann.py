"""The approximate index of a large space: faiss IVF (flat lists, inner product) over slot ids.

IVF rather than HNSW: it removes ids (a deleted or re-embedded document leaves no stale row behind,
so no compaction is needed), it is trained in seconds on a sample, and the lists it probes are
filtered by an ``IDSelectorBitmap`` of the allowed slots. ``bench/vectors.py`` chose ``nprobe``.
"""

from __future__ import annotations

import faiss
import numpy as np

PROBES = 24
"""Lists probed per query (bench/vectors.py: recall@10 >= 0.95 on 100k clustered 384-d vectors)."""
TRAINING_SAMPLE = 40_000
"""Rows k-means is trained on (faiss samples at most 256 per list anyway)."""

Hits = list[tuple[int, float]]


class ApproximateIndex:
    def __init__(self, index: faiss.Index, trained_on: int) -> None:
        self.index = index
        self.trained_on = trained_on

    @classmethod
    def build(cls, rows: np.ndarray, slots: np.ndarray) -> ApproximateIndex:
        """Train on a seeded sample of ``rows`` (normalised), then add them all under their slots."""
        count, dimensions = rows.shape
        lists = int(min(4096, max(64, np.sqrt(count))))
        # The factory's index owns its quantizer (one built from Python would be freed under it).
        index = faiss.index_factory(dimensions, f"IVF{lists},Flat", faiss.METRIC_INNER_PRODUCT)
        sample = rows
        if count > TRAINING_SAMPLE:
            sample = rows[np.random.default_rng(0).choice(count, TRAINING_SAMPLE, replace=False)]
        index.train(np.ascontiguousarray(sample))
        index.add_with_ids(np.ascontiguousarray(rows), slots.astype(np.int64))
        return cls(index, count)

    def add(self, rows: np.ndarray, slots: list[int]) -> None:
        self.index.add_with_ids(np.ascontiguousarray(rows, dtype=np.float32), np.asarray(slots, np.int64))

    def remove(self, slots: list[int]) -> None:
        """One scan of the lists whatever the count: callers remove a batch's slots together."""
        if slots:
            self.index.remove_ids(np.asarray(slots, dtype=np.int64))  # type: ignore[arg-type]

    def search(self, q: np.ndarray, mask: np.ndarray, owners: np.ndarray, k: int) -> Hits | None:
        """The best ``k`` documents among the rows ``mask`` allows, or None when the probed lists hold
        fewer than ``k`` of them (the caller then scores exactly)."""
        wanted = 4 * k + 16
        bits = np.packbits(mask, bitorder="little")
        selector = faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bits))
        params = faiss.SearchParametersIVF(sel=selector, nprobe=PROBES)  # type: ignore[call-arg]
        scores, slots = self.index.search(q.reshape(1, -1), wanted, params=params)
        best: dict[int, float] = {}
        for slot, score in zip(slots[0].tolist(), scores[0].tolist(), strict=True):
            if slot < 0:
                break
            doc = int(owners[slot])
            if score > best.get(doc, -np.inf):
                best[doc] = score
        if len(best) < k:
            return None
        ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [(doc, min(1.0, max(-1.0, score))) for doc, score in ranked]

    def serialize(self) -> np.ndarray:
        data: np.ndarray = faiss.serialize_index(self.index)
        return data

    @classmethod
    def deserialize(cls, data: np.ndarray, trained_on: int) -> ApproximateIndex:
        return cls(faiss.deserialize_index(data), trained_on)
