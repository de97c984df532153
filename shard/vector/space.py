"""One embedder's vectors in memory, searchable: the nearest documents to a query among allowed ones.

Rows live in slots of one matrix (normalised float32, or packed sign bits for ``binaryQuantized``);
``owners`` maps a slot to its document, ``slots`` a document to its rows (a document may hold several
embeddings: it scores with its best one). Freed slots are reused.

Search is exact (one matrix-vector product over the candidate rows) while the space is small or the
allowed documents few; past ``APPROXIMATE_FROM`` rows an HNSW graph (faiss, inner product over
quantised rows, ``ann.py``) proposes candidates among the allowed slots (``IDSelectorBitmap``), which
are re-scored exactly, so similarities never depend on the index.
Similarity is the cosine of the query and the document's best vector; over sign bits it is
``1 - 2 * hamming / d``, also in [-1, 1].

A graph is built (the space crossing ``APPROXIMATE_FROM``, a quarter of its nodes dead, a space
opened without one) on a thread of its own, from a copy of the rows, so the batch that called for it
ends without waiting (seconds to a minute at 100k rows): searches meanwhile take the exact path, or
the old graph, which goes on following the batches. The changes made during the build are recorded
and applied to the new graph before it is swapped in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import faiss
import numpy as np
from pyroaring import BitMap

from common.logging import get_logger
from shard.vector.ann import ApproximateIndex
from shard.vector.storage import Entry

log = get_logger(__name__)

APPROXIMATE_FROM = 20_000
"""Rows from which the HNSW graph answers (bench/vectors.py: exact search p50 1.1-1.3 ms at 20k rows,
3.3-6.7 ms at 50k and 6-20 ms at 100k on the loaded 2-core machine)."""
EXACT_SHARE = 0.2
"""Allowed rows below this share of the space are scored exactly instead (at 100k rows, 20k rows
cost ~1.2 ms): a graph walk through a sparse selection strays far and loses recall."""

Hits = list[tuple[int, float]]

_POPCOUNT = np.array([bin(value).count("1") for value in range(256)], dtype=np.int32)


def _in_a_thread(work: Callable[[], None]) -> None:
    threading.Thread(target=work, name="vector-graph", daemon=True).start()


start_build: Callable[[Callable[[], None]], None] = _in_a_thread
"""Runs a graph build in the background (a module attribute so a test can run it when it chooses)."""


@dataclass
class _Build:
    """A graph being built from the rows alive when it started, and the changes since."""

    removed: list[int] = field(default_factory=list)
    added: list[int] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


class SharedLock:
    """Many readers at once or one writer; a waiting writer holds new readers back. Searches release
    the GIL inside faiss, so two cores answer two searches of one space at once."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._readers = 0
        self._writers = 0
        """Writers waiting or writing."""
        self._writing = False

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._condition:
            while self._writers:
                self._condition.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._condition:
                self._readers -= 1
                if not self._readers:
                    self._condition.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._condition:
            self._writers += 1
            while self._writing or self._readers:
                self._condition.wait()
            self._writing = True
        try:
            yield
        finally:
            with self._condition:
                self._writing = False
                self._writers -= 1
                self._condition.notify_all()


class Space:
    """One writer (the batch thread) and many searches: searches hold ``lock.reading()``; the writer
    holds ``lock.writing()`` while it changes what searches read (``put``/``remove`` under it, ``settle``
    takes it itself)."""

    def __init__(self, dimensions: int, binary: bool) -> None:
        self.dimensions = dimensions
        self.binary = binary
        self.lock = SharedLock()
        width = (dimensions + 7) // 8 if binary else dimensions
        self.rows = np.zeros((0, width), dtype=np.uint8 if binary else np.float32)
        self.owners = np.zeros(0, dtype=np.int64)
        self.used = 0
        """Slots ever used (the high-water mark)."""
        self.free: list[int] = []
        self.slots: dict[int, list[int]] = {}
        self.ann: ApproximateIndex | None = None
        self.graphs = 0
        """Graphs swapped in so far (a checkpoint older than the last one lacks it)."""
        self._removed: list[int] = []
        self._added: list[int] = []
        """Slots changed since the HNSW graph last followed (``settle``)."""
        self._building: _Build | None = None
        self._graph_lock = threading.Lock()
        """Serialises ``settle`` and the swap of a built graph, so each change reaches one graph once."""

    @property
    def size(self) -> int:
        """Rows holding an embedding."""
        return self.used - len(self.free)

    # --- changes -------------------------------------------------------------------------------------

    def remove(self, doc_id: int) -> None:
        slots = self.slots.pop(doc_id, None)
        if not slots:
            return
        self.owners[slots] = -1
        self.free.extend(slots)
        self._removed.extend(slots)

    def put(self, doc_id: int, entry: Entry) -> None:
        """The document's rows become ``entry``'s (none when it holds no embedding)."""
        self.remove(doc_id)
        if entry.count == 0:
            return
        rows = self.prepare(entry.embeddings)
        slots = [self._allocate() for _ in range(len(rows))]
        self.rows[slots] = rows
        self.owners[slots] = doc_id
        self.slots[doc_id] = slots
        self._added.extend(slots)

    def prepare(self, embeddings: np.ndarray) -> np.ndarray:
        """Rows as stored in memory: normalised (cosine is then an inner product), or sign bits."""
        embeddings = np.asarray(embeddings, dtype=np.float32).reshape(-1, self.dimensions)
        if self.binary:
            return np.packbits(embeddings > 0, axis=1)
        norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
        return embeddings / np.where(norms == 0, 1, norms)

    def _allocate(self) -> int:
        if self.free:
            return self.free.pop()
        if self.used == len(self.owners):
            capacity = max(1024, 2 * self.used)
            rows = np.zeros((capacity, self.rows.shape[1]), dtype=self.rows.dtype)
            rows[: self.used] = self.rows[: self.used]
            owners = np.full(capacity, -1, dtype=np.int64)
            owners[: self.used] = self.owners[: self.used]
            self.rows, self.owners = rows, owners
        self.used += 1
        return self.used - 1

    def settle(self) -> None:
        """Bring the HNSW graph up to the rows after a batch of changes: removed rows' nodes marked
        dead, new rows linked. A graph is built once the space is large and rebuilt once a quarter of
        its nodes are dead, in the background (``start_build``); it is dropped when the space is
        small again.

        Called by the one writer without the lock, which it takes only to change the graph searches
        use."""
        removed, added = self._removed, self._added
        self._removed, self._added = [], []
        with self._graph_lock:
            if self.binary or self.size < APPROXIMATE_FROM:
                self._building = None  # a build under way is thrown away when it ends
                with self.lock.writing():
                    self.ann = None
                return
            if self._building is not None:
                self._building.removed.extend(removed)
                self._building.added.extend(added)
            if self.ann is not None:
                fresh = sorted({slot for slot in added if self.owners[slot] >= 0})
                rows = self.rows[fresh]
                with self.lock.writing():
                    self.ann.remove(removed)
                    if fresh:
                        self.ann.add(rows, fresh)
            if (self.ann is None or self.ann.stale) and self._building is None:
                alive = np.flatnonzero(self.owners[: self.used] >= 0)
                rows = self.rows[alive]  # a copy: the batches go on changing the rows meanwhile
                build = self._building = _Build()
                start_build(lambda: self._build(build, rows, alive))

    def _build(self, build: _Build, rows: np.ndarray, slots: np.ndarray) -> None:
        """On the build's thread: build from the copied rows, catch up with the changes recorded
        since, swap in."""
        try:
            built = ApproximateIndex.build(rows, slots)
            with self._graph_lock:
                if self._building is not build:
                    return  # the space went small again, or a later build replaced this one
                with self.lock.reading():  # the rows as the last settle left them
                    fresh = sorted({slot for slot in build.added if self.owners[slot] >= 0})
                    added = self.rows[fresh]
                built.remove(build.removed)
                if fresh:
                    built.add(added, fresh)
                with self.lock.writing():
                    self.ann = built
                    self.graphs += 1
                self._building = None
            log.info("vector graph built", rows=len(slots), caught_up=len(fresh))
        except Exception:  # the exact path keeps answering; the next settle tries again
            log.exception("vector graph build failed")
            with self._graph_lock:
                if self._building is build:
                    self._building = None
        finally:
            build.done.set()

    def wait_for_graph(self, timeout: float | None = None) -> bool:
        """Wait until no graph build is under way (``bench/vectors.py`` times builds with it);
        False on timeout."""
        build = self._building
        return build is None or build.done.wait(timeout)

    # --- search --------------------------------------------------------------------------------------

    def nearest(self, query: np.ndarray, k: int, allowed: BitMap) -> Hits:
        """Up to ``k`` ``(doc id, similarity)`` among ``allowed``, best first, ties by doc id."""
        if k <= 0 or not allowed or self.size == 0:
            return []
        q = np.ascontiguousarray(self.prepare(query)[0])
        owners = self.owners[: self.used]
        mask = _allowed_rows(owners, allowed)
        count = int(np.count_nonzero(mask))
        if count == 0:
            return []
        if self.ann is not None and count >= EXACT_SHARE * self.size:
            slots = self.ann.candidates(q, mask, 4 * k + 16)
            found = _best_documents(slots, self._scores(q, self.rows[slots]), owners, k)
            if len(found) == k:
                return found  # else the probed lists held too few allowed documents: exactly below
        candidates = np.flatnonzero(mask)
        if count > self.used // 2:
            # One product over every row and a mask is cheaper than copying most of them out.
            return _best_documents(candidates, self._scores(q, self.rows[: self.used])[mask], owners, k)
        return _best_documents(candidates, self._scores(q, self.rows[candidates]), owners, k)

    def _scores(self, q: np.ndarray, matrix: np.ndarray) -> np.ndarray:
        """Similarity of ``q`` (prepared) to each row of ``matrix``.

        Float rows go through faiss's single-threaded SIMD inner products: numpy's product calls a
        multi-threaded BLAS whose threads wait on a loaded 2-core machine (100k rows: ~8-16 ms against
        ~5 ms, bench/vectors.py)."""
        if self.binary:
            distances = _POPCOUNT[np.bitwise_xor(matrix, q)].sum(axis=1)
            return (1.0 - 2.0 * distances / self.dimensions).astype(np.float32)
        matrix = np.ascontiguousarray(matrix)
        scores = np.empty(len(matrix), dtype=np.float32)
        if len(matrix):
            faiss.fvec_inner_products_ny(  # type: ignore[attr-defined]
                faiss.swig_ptr(scores),
                faiss.swig_ptr(q),
                faiss.swig_ptr(matrix),
                self.dimensions,
                len(matrix),
            )
        return scores


def _allowed_rows(owners: np.ndarray, allowed: BitMap) -> np.ndarray:
    """Which rows belong to an allowed document (one lookup per row in a dense boolean table)."""
    ids = np.frombuffer(allowed.to_array(), dtype=np.uint32)
    table = np.zeros(max(int(ids[-1]), int(owners.max(initial=0))) + 2, dtype=bool)
    table[ids] = True
    mask: np.ndarray = table[owners]  # a freed row's owner is -1: the table's last cell, always False
    return mask


def _best_documents(rows: np.ndarray, scores: np.ndarray, owners: np.ndarray, k: int) -> Hits:
    """The ``k`` best documents by their best row. Every row scoring at least the ``wanted``-th best is
    kept (so a tie at the cut is not decided by the partition), then documents are ranked by score,
    then id; too few distinct documents (several rows each) widen the cut."""
    wanted = min(len(rows), 4 * k + 16)
    while True:
        if wanted < len(rows):
            threshold = np.partition(scores, len(scores) - wanted)[len(scores) - wanted]
            picked = np.flatnonzero(scores >= threshold)
        else:
            picked = np.arange(len(rows))
        best: dict[int, float] = {}
        for row, score in zip(owners[rows[picked]].tolist(), scores[picked].tolist(), strict=True):
            if score > best.get(row, -np.inf):
                best[row] = score
        if len(best) >= k or wanted >= len(rows):
            ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]
            return [(doc, min(1.0, max(-1.0, score))) for doc, score in ranked]
        wanted = min(len(rows), wanted * 4)
