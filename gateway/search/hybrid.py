"""Semantic and hybrid search in the gateway (search.md §1.3, §7.6).

The query's vector is the one given (``vector``) or its text embedded by one shard, chosen by a hash
of the text so that a repeated query meets its cached embedding (``Embed``). Every shard then runs
the vector leg, and for a hybrid search the keyword leg beside it, and returns the two ranked lists
apart. The gateway merges each list over the shards (as one shard holding everything would rank
it), then fuses them exactly as the contract's steps say:

2. the keyword list, when it fills the page and every hit scores at least 0.45 once weighted by
   ``1 - semanticRatio``, is the answer alone (no semantic hit, the keyword count and facets);
3. an embedding failure leaves the keyword answer (logged), unless the search is semantic only;
5. otherwise the lists merge hit by hit on their score groups, keyword scores weighted by
   ``1 - semanticRatio`` and similarities by ``semanticRatio``, sort values compared as they are, a
   zero score losing against a sort value, the hit with more groups left winning when one runs out,
   ties going to the semantic hit; a document found by both legs is kept where it comes first.

With ``matchingStrategy: "bm25"`` (a Sift extension) and no sort values among the hits, the legs'
scores are added instead (``fuse_scores``): a document both legs find gathers evidence from each,
where step 5 keeps only its better leg, each leg taken ``FUSION_DEPTH`` hits deep at least. Step 2
is then skipped: it belongs to step 5's comparison of one leg's score against the other's, and would
drop the similarities that the sum adds. On Cranfield with MiniLM this lifts hybrid nDCG@10 from
0.3986 (step 5) to 0.42 (``python -m bench.run relevance --modes hybrid --strategies bm25``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson
from sanic import Sanic

from common.errors import ApiError
from common.logging import get_logger
from gateway.search.order import sort_value_order

log = get_logger(__name__)

KEYWORD_ENOUGH = 0.45
"""§7.6 step 2: a keyword hit weighted by ``1 - semanticRatio`` scoring at least this needs no help."""
DEFAULT_SEMANTIC_RATIO = 0.5
FUSION_DEPTH = 50
"""Where the legs' scores add, each leg is fused over at least this many hits, however few the page
asks for: a document ranked moderately by both legs can pass one that a single leg ranks first, and
a page's first hits do not depend on ``limit`` up to this. Chosen on Cranfield with MiniLM (nDCG@10
of the legs cut at 10 / 20 / 30 / 50 / 100 hits, semanticRatio 0.5: 0.405 / 0.409 / 0.416 / 0.418 /
0.419); the shards rank and render this many hits per leg, whatever the page."""
MEDIA_DISABLED = (
    "passing `media` in a search query requires enabling the `multimodal` experimental feature."
    " See https://github.com/orgs/meilisearch/discussions/846"
)
_EPSILON = 2.220446049250313e-16
"""Weighted scores closer than this are equal (float64's epsilon)."""


@dataclass(frozen=True)
class VectorQuery:
    """A semantic or hybrid search as the shards run it."""

    vector: list[float]
    ratio: float
    semantic_only: bool
    adds_scores: bool = False
    """The keyword leg is ``bm25``'s, whose scores ``fuse_scores`` may add to the similarities."""

    def leg_depth(self, wanted: int) -> int:
        """The hits each shard returns per leg for a page of ``wanted``."""
        deepens = wanted > 0 and self.adds_scores and not self.semantic_only
        return max(wanted, FUSION_DEPTH) if deepens else wanted


def semantic_kind(params: dict[str, Any]) -> bool:
    """Whether a search (its kind selected, ``params.select_search_kind``) is semantic or hybrid: it
    then answers ``semanticHitCount``, even when its keyword leg answered alone."""
    return params.get("hybrid") is not None


def keyword_params(params: dict[str, Any]) -> dict[str, Any]:
    """The same search without its vector leg."""
    return {name: value for name, value in params.items() if name not in ("hybrid", "vector", "media")}


def is_semantic_only(params: dict[str, Any]) -> bool:
    """A semantic or hybrid search whose keyword leg does not run: ``semanticRatio`` 1, or no text."""
    ratio = (params.get("hybrid") or {}).get("semanticRatio", DEFAULT_SEMANTIC_RATIO)
    return bool(ratio == 1.0 or not (params.get("q") or "").strip())


async def vector_query(app: Sanic, uid: str, params: dict[str, Any]) -> VectorQuery | None:
    """What the shards need for the vector leg; None for a keyword search, or for a hybrid one whose
    text could not be embedded (step 3). Raises the contract's errors: an unknown embedder, an index
    that does not exist, a semantic-only search's embedding failure."""
    hybrid = params.get("hybrid")
    if hybrid is None:
        return None
    ratio = hybrid.get("semanticRatio", DEFAULT_SEMANTIC_RATIO)
    semantic_only = is_semantic_only(params)
    vector = params.get("vector")
    if vector is None:
        text = params.get("q") or ""
        media = params.get("media")
        fragments = None
        if media is not None:
            app.ctx.features.require("multimodal", MEDIA_DISABLED)
            fragments = {"q": params.get("q"), "media": media}
        try:
            vector = await embed(app, uid, hybrid["embedder"], text, fragments)
        except ApiError as error:
            if semantic_only or error.code != "vector_embedding_error":
                raise
            log.warning("hybrid search answered by keywords: the query could not be embedded", index=uid)
            return None
    return VectorQuery(vector, ratio, semantic_only, params.get("matchingStrategy") == "bm25")


async def embed(
    app: Sanic, uid: str, embedder: str, text: str, fragments: dict[str, Any] | None = None
) -> list[float]:
    """``text`` embedded by the index's embedder, on the shard ``text`` hashes to; ``fragments``
    (``{"q", "media"}``, a search with ``media``) render the embedder's search fragment instead."""
    cluster = app.ctx.cluster
    query: dict[str, Any] = {"index": uid, "embedder": embedder, "text": text}
    key = text
    if fragments is not None:
        query["fragments"] = fragments
        key = orjson.dumps(fragments).decode()
    reply = await cluster.ask_shard(key, "Embed", query, 120)
    if not reply["indexFound"]:
        # That shard never held the index: it has neither settings nor documents anywhere.
        await cluster.ask_scheduler("GetIndex", {"uid": uid})
        raise ApiError("invalid_search_embedder", f"Cannot find embedder with name `{embedder}`.")
    vector: list[float] = reply["vector"]
    return vector


def keyword_suffices(keyword: Sequence[Any], ratio: float, wanted: int) -> bool:
    """§7.6 step 2, on the merged keyword hits (each with a ``score``)."""
    page = keyword[:wanted]
    return len(page) >= wanted and all(hit.score * (1 - ratio) >= KEYWORD_ENOUGH for hit in page)


def fuse(keyword: Sequence[Any], semantic: Sequence[Any], ratio: float) -> list[Any]:
    """§7.6 step 5: both lists (hits with ``groups`` and ``seq``) merged, each keeping its order."""
    fused: list[Any] = []
    seen: set[int] = set()
    k = s = 0
    while k < len(keyword) or s < len(semantic):
        if s >= len(semantic) or (
            k < len(keyword) and compare(keyword[k].groups, 1 - ratio, semantic[s].groups, ratio) < 0
        ):
            hit, k = keyword[k], k + 1
        else:
            hit, s = semantic[s], s + 1
        if hit.seq not in seen:
            seen.add(hit.seq)
            fused.append(hit)
    return fused


def fuse_scores(keyword: Sequence[Any], semantic: Sequence[Any], ratio: float) -> list[Any] | None:
    """Both lists merged by ``(1 - ratio) * keyword score + ratio * similarity`` (0 for a leg that did
    not find the document), ties by insertion order; None when a hit carries sort values, which have
    no score to add, or distinct values, whose deduplication reaches past the hits asked for (step 5
    then merges)."""
    if any(
        len(hit.groups) != 1 or isinstance(hit.groups[0], list) or hit.distinct is not None
        for hit in (*keyword, *semantic)
    ):
        return None
    parts: dict[int, list[float]] = {}
    found: dict[int, Any] = {}
    for leg, (hits, weight) in enumerate(((keyword, 1 - ratio), (semantic, ratio))):
        for hit in hits:
            parts.setdefault(hit.seq, [0.0, 0.0])[leg] = weight * hit.score
            found.setdefault(hit.seq, hit)
    ranked = sorted(parts, key=lambda seq: (-sum(parts[seq]), seq))
    return [
        replace(found[seq], score=sum(parts[seq]), semantic=parts[seq][1] > parts[seq][0]) for seq in ranked
    ]


def compare(a: Sequence[Any], weight_a: float, b: Sequence[Any], weight_b: float) -> int:
    """Negative when groups ``a`` come first, positive when ``b`` do, 0 on a tie."""
    for group_a, group_b in itertools.zip_longest(a, b):
        if group_a is None or group_b is None:
            if group_a is group_b:
                return 0
            return -1 if group_b is None else 1
        a_sorts, b_sorts = isinstance(group_a, list), isinstance(group_b, list)
        if a_sorts and b_sorts:
            order_a, order_b = sort_value_order(group_a), sort_value_order(group_b)
            if order_a != order_b:
                return -1 if order_a < order_b else 1
        elif a_sorts:
            return -1 if group_b == 0 else 1
        elif b_sorts:
            return 1 if group_a == 0 else -1
        else:
            weighted_a, weighted_b = group_a * weight_a, group_b * weight_b
            if abs(weighted_a - weighted_b) > _EPSILON:
                return -1 if weighted_a > weighted_b else 1
    return 0
