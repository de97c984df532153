"""The vector leg of a semantic or hybrid search on one shard (search.md §7.6 step 4, §1.6, §3.2).

The query's vector ranks the filtered documents by similarity: ``vectorSort`` stands where the first
relevancy rule of the index's ranking rules stands (the others are dropped), sort and custom
``field:asc|desc`` rules keep their places, so ``sort`` still orders documents of equal similarity
(or comes first when it is listed first). Documents without an embedding come last, in one bucket
whose similarity is null and score 0, as the reference engine answers. A bucket of equal similarity
is whole: the nearest neighbours are fetched in growing chunks among the documents not ranked yet,
and a chunk's last similarity is held back until a chunk ends below it.

Similarity is the reference's: ``(1 + cosine) / 2`` in float32 (the cosine of the document's best
embedding), then shifted by the embedder's ``distribution`` (search.md §6.11).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from pyroaring import BitMap

from common.errors import ApiError
from shard.index.env import StoreEnv, Txn
from shard.index.settings import displayed_attributes
from shard.query.context import SearchContext
from shard.query.distinct import Distinct
from shard.query.parse import ParsedQuery
from shard.query.query_embedding import expected_dimensions
from shard.query.ranking.bucket_sort import RankedDoc, Ranker
from shard.query.ranking.coverage import Kept
from shard.query.ranking.rules import DEFAULT_RULES, Bucket, Rule
from shard.query.ranking.score import Rank
from shard.query.ranking.sort import in_place_of_relevancy, sort_rules
from shard.vector import VectorStore, embedded, nearest

if TYPE_CHECKING:
    from common.sort import SortCriterion

_EPSILON = np.float32(np.finfo(np.float32).eps)
"""The lowest similarity a ``distribution`` gives (the reference clamps to float32's epsilon)."""

_VECTOR_THREAD = ThreadPoolExecutor(1, thread_name_prefix="vector")
"""A hybrid query's first nearest-neighbour search runs here while the search thread ranks its
keyword leg: the vector space's search (faiss, numpy) releases the GIL, so the two legs overlap."""


class VectorSpace(Protocol):
    """One embedder's vectors on this shard (``shard/vector``)."""

    def nearest(self, query: np.ndarray, k: int, allowed: BitMap) -> list[tuple[int, float]]:
        """The ``k`` documents of ``allowed`` nearest to ``query``: (doc id, cosine of the document's best
        embedding), best first, ties by doc id."""
        ...

    def embedded(self) -> BitMap:
        """The documents holding at least one embedding."""
        ...


class StoredSpace:
    """An embedder's vectors in a search's snapshot (``shard/vector``'s read seam)."""

    def __init__(self, vectors: VectorStore, env: StoreEnv, txn: Txn, index_id: int, embedder: str) -> None:
        self._vectors, self._env, self._txn = vectors, env, txn
        self._index_id, self._embedder = index_id, embedder
        self._embedded: BitMap | None = None

    def nearest(self, query: np.ndarray, k: int, allowed: BitMap) -> list[tuple[int, float]]:
        """Reads only the in-memory space (no snapshot), so it may run on the vector thread."""
        return nearest(self._vectors, self._index_id, self._embedder, query, k, allowed)

    def embedded(self) -> BitMap:
        if self._embedded is None:
            self._embedded = embedded(self._env, self._txn, self._index_id, self._embedder)
        return self._embedded


def similarities(cosines: Sequence[float], distribution: dict[str, float] | None) -> np.ndarray:
    """The reference's similarity of each cosine, in float32: ``(1 + cos) / 2``, then with a
    ``distribution`` ``clamp(0.4 / sigma * s + 0.5 - 0.4 / sigma * mean, epsilon, 1)``."""
    values = (np.float32(1) + np.asarray(cosines, dtype=np.float32)) / np.float32(2)
    if distribution is None:
        return np.clip(values, np.float32(0), np.float32(1))
    mean, sigma = np.float32(distribution["mean"]), np.float32(distribution["sigma"])
    scale = np.float32(0.4) / sigma
    shifted = scale * values + np.float32(0.5) - scale * mean
    return np.clip(shifted, _EPSILON, np.float32(1))


def embedder_settings(settings: dict[str, Any], name: str, code: str) -> dict[str, Any]:
    """The index's embedder ``name`` (resolved settings), or the contract's error under ``code``."""
    embedder = (settings.get("embedders") or {}).get(name)
    if embedder is None:
        raise ApiError(code, f"Cannot find embedder with name `{name}`.")
    return dict(embedder)


def check_dimensions(vector: Sequence[float], expected: int | None) -> None:
    if expected is not None and len(vector) != expected:
        raise ApiError(
            "invalid_vector_dimensions",
            f"Invalid vector dimensions: expected: `{expected}`, found: `{len(vector)}`.",
        )


def query_vector(
    settings: dict[str, Any], params: dict[str, Any], space_of: Callable[[str], VectorSpace]
) -> QueryVector | None:
    """What a semantic or hybrid search (``hybrid`` and the ``vector`` the gateway sends, given or
    embedded) ranks with; None for a keyword search. The embedder must exist and the vector have its
    dimensions (search.md §1.3, the errors of §1.9); a facet search only checks them
    (``embedderCheck``: it counts every document the filter keeps, search.md §3.1)."""
    check = params.get("embedderCheck")
    if check is not None:
        config = embedder_settings(settings, check["embedder"], "invalid_search_embedder")
        if check.get("vector") is not None:
            check_dimensions(check["vector"], expected_dimensions(config))
    hybrid, vector = params.get("hybrid"), params.get("vector")
    if hybrid is None or vector is None:
        return None
    code = "invalid_similar_embedder" if params.get("similarTo") is not None else "invalid_search_embedder"
    config = embedder_settings(settings, hybrid["embedder"], code)
    check_dimensions(vector, expected_dimensions(config))
    space = space_of(hybrid["embedder"])
    return QueryVector(np.asarray(vector, dtype=np.float32), space, config.get("distribution"))


@dataclass(frozen=True)
class QueryVector:
    """What the vector leg searches with."""

    vector: np.ndarray
    """float32, as given (the space normalises)."""
    space: VectorSpace
    distribution: dict[str, float] | None


class _Fetcher:
    """Nearest neighbours of the query among a bucket's documents, the first fetch possibly
    started ahead on the vector thread (``prefetch``)."""

    def __init__(self, query: QueryVector) -> None:
        self.query = query
        self._ahead: tuple[BitMap, int, Future[list[tuple[int, float]]]] | None = None

    def prefetch(self, allowed: BitMap, k: int) -> None:
        future = _VECTOR_THREAD.submit(self.query.space.nearest, self.query.vector, k, allowed)
        self._ahead = (allowed, k, future)

    def nearest(self, allowed: BitMap, k: int) -> list[tuple[int, float]]:
        if self._ahead is not None:
            ahead_allowed, ahead_k, future = self._ahead
            self._ahead = None
            found = future.result()
            if ahead_k >= k and ahead_allowed == allowed:
                return found[:k]
        return self.query.space.nearest(self.query.vector, k, allowed)

    def drop(self) -> None:
        """Wait for a prefetch nobody used (its result must not outlive the snapshot)."""
        if self._ahead is not None:
            self._ahead[2].result()
            self._ahead = None


class VectorSortRule:
    """Buckets of equal similarity, best first; then, with ``missing``, the documents without an
    embedding (similarity null)."""

    name = "vectorSort"

    def __init__(self, fetcher: _Fetcher, missing: bool = True) -> None:
        self.fetcher = fetcher
        self.first_chunk = 1
        """The first fetch's size: the page and one more (to see whether the last bucket goes on)."""
        self.missing = missing

    def buckets(self, ranker: Ranker, docs: BitMap, kept: Kept, typos: int | None) -> Iterator[Bucket]:
        """Below ``rankingScoreThreshold`` (a similarity is the score) the rest is one bucket that
        the ranker drops whole: no more neighbours are fetched, and counting stays cheap."""
        query = self.fetcher.query
        threshold = ranker.threshold
        embedded = query.space.embedded()
        without = docs - embedded if self.missing else BitMap()
        remaining = docs & embedded
        chunk = max(self.first_chunk, 1)
        while remaining:
            found = self.fetcher.nearest(remaining, chunk)
            if not found:
                break  # documents the space cannot reach (never expected) go with those without vectors
            complete = len(found) < chunk or chunk >= len(remaining)
            ids = [doc_id for doc_id, _ in found]
            values = similarities([cosine for _, cosine in found], query.distribution)
            end = len(found)
            if not complete:
                # The last similarity may go on past the chunk: its documents wait for a larger one.
                end = int(np.searchsorted(-values, -values[-1], side="left"))
            start = 0
            while start < end:
                value = float(values[start])
                if threshold is not None and value < threshold:
                    yield Bucket(remaining | without, vector_rank(value), kept, typos)
                    return
                stop = start + 1
                while stop < end and values[stop] == values[start]:
                    stop += 1
                group = BitMap(ids[start:stop])
                remaining -= group
                yield Bucket(group, vector_rank(value), kept, typos)
                start = stop
            if complete:
                break
            chunk *= 4
        if self.missing:
            without |= remaining
        if without:
            yield Bucket(without, vector_rank(None), kept, typos)

    def floor(self, ranker: Ranker, kept: Kept) -> Rank:
        return vector_rank(None)


def vector_rank(similarity: float | None) -> Rank:
    return Rank("vectorSort", (), {"similarity": similarity}, vector=True, similarity=similarity)


def semantic_rules(
    ctx: SearchContext, criteria: Sequence[SortCriterion], vector_rule: Rule, *, sorted_by_rules: bool = True
) -> list[Rule]:
    """The index's ranking rules with ``vectorSort`` in place of the relevancy rules (at the first
    one's place), sort rules where they stand; ``sorted_by_rules`` False: ``vectorSort`` alone
    (similar documents)."""
    if not sorted_by_rules:
        return [vector_rule]
    names = ctx.settings.get("rankingRules") or DEFAULT_RULES
    sorts = sort_rules(names, criteria, displayed_attributes(ctx.settings))
    rules = in_place_of_relevancy(names, sorts, vector_rule)
    if vector_rule not in rules:
        rules.append(vector_rule)
    return rules


class SemanticLeg:
    """Ranks a search's documents by the query vector (see the module docstring)."""

    def __init__(
        self,
        ctx: SearchContext,
        query: QueryVector,
        left_out: BitMap,
        *,
        threshold: float | None,
        sort: Sequence[SortCriterion] = (),
        distinct_field: str | None = None,
        similar: bool = False,
    ) -> None:
        """``left_out``: live documents the search excludes (filter, pinned, a /similar target);
        ``similar``: the /similar route's ranking: similarity alone, documents without an embedding
        never ranked (yet counted, as the reference counts them)."""
        self.universe = ctx.state.live - left_out
        self.fetcher = _Fetcher(query)
        self.distinct = None if distinct_field is None else Distinct(ctx, distinct_field)
        self._similar = similar
        self._first_chunk = 1
        rule = VectorSortRule(self.fetcher, missing=not similar)
        self.ranker = Ranker(
            ctx,
            ParsedQuery(),
            [],
            strategy="last",
            threshold=threshold,
            distinct=self.distinct,
            rules=semantic_rules(ctx, sort, rule, sorted_by_rules=not similar),
        )
        self._rule = rule
        self.candidates = 0

    def prefetch(self, wanted: int) -> None:
        """Start the first nearest-neighbour search on the vector thread (hybrid searches, whose
        keyword leg ranks meanwhile)."""
        self._rule.first_chunk = wanted + 1
        if wanted > 0 and self.universe:
            self.fetcher.prefetch(self.universe & self.fetcher.query.space.embedded(), wanted + 1)

    def rank(self, wanted: int, cap: int) -> list[RankedDoc]:
        """The best ``wanted`` documents; ``candidates`` then holds the count (search.md §1.5). With a
        threshold the count is every document reaching it (up to ``cap``, past which the rest count
        whole): similarities come best first, so that costs the neighbours down to the threshold,
        and the count does not depend on how far the page went, nor on the number of shards."""
        self._rule.first_chunk = wanted + 1
        try:
            outcome = self.ranker.rank(self.universe, wanted)
        finally:
            self.fetcher.drop()
        self.candidates = outcome.candidates
        if self.ranker.threshold is not None:
            self.candidates = self.ranker.count(self.universe, cap)
        return outcome.docs

    def kept(self) -> BitMap:
        """Every document scoring at least the threshold (all without one)."""
        return self.ranker.kept(self.universe)
