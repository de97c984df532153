"""A query's candidates apart from ranking: the documents its negated words exclude, the language
its text is stemmed in, and the documents it keeps (federated unions of several queries' candidates
for counts and facets, ``facetUnion`` and ``countUnion``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyroaring import BitMap

from shard.analysis import FALLBACK_LANGUAGE, iso639_3
from shard.query.context import SearchContext
from shard.query.derivations import derive
from shard.query.docsets import phrase_docs, word_docs
from shard.query.parse import ParsedQuery, parse_query
from shard.query.ranking.bm25_rule import KeywordRanker, term_limit
from shard.query.search_filter import filtered_out
from shard.query.semantic import SemanticLeg, VectorSpace, query_vector


def query_candidates(
    ctx: SearchContext, params: dict[str, Any], scored: bool, space_of: Callable[[str], VectorSpace]
) -> BitMap:
    """One query's candidates, as its search facets them before ranking; ``scored``: only those that
    reach its ``rankingScoreThreshold``, as its search counts them. A query whose vector leg took
    part (the gateway sends its ``vector``) adds the documents that leg keeps."""
    ctx.restrict_to(params.get("attributesToSearchOn"))
    locales = tuple(params.get("locales") or ())
    strategy = params.get("matchingStrategy", "last")
    query = parse_query(ctx.analyzer, params.get("q"), locales, term_limit(strategy))
    unfiltered = filtered_out(ctx, params)
    semantic = query_vector(ctx.settings, params, space_of)
    found = BitMap()
    if semantic is not None:
        threshold = params.get("rankingScoreThreshold") if scored else None
        found = SemanticLeg(ctx, semantic, unfiltered, threshold=threshold).kept()
        if params.get("semanticOnly"):
            return found
    excluded = negated_documents(ctx, query) | unfiltered
    if query.placeholder:
        return found | (ctx.state.live - excluded)
    derivations = derive(ctx, query, query_language(ctx, params.get("q"), locales))
    threshold = params.get("rankingScoreThreshold") if scored else None
    ranker = KeywordRanker(
        ctx, query, derivations, strategy=strategy, threshold=threshold, term_counts=params.get("termCounts")
    )
    return found | ranker.kept(ranker.universe() - excluded)


def negated_documents(ctx: SearchContext, query: ParsedQuery) -> BitMap:
    """The documents the query's negated words and phrases exclude."""
    excluded = BitMap()
    for word in query.negated_words:
        excluded |= word_docs(ctx, word)
    for words in query.negated_phrases:
        excluded |= phrase_docs(ctx, words, ctx.allowed_fields)
    return excluded


def query_language(ctx: SearchContext, q: str | None, locales: tuple[str, ...]) -> str:
    """The stemming language of the query: its locales, else detection (20 characters or more), else
    ``FALLBACK_LANGUAGE``, as for document text too short to detect a language in."""
    if locales:
        return iso639_3(locales[0])
    detected = ctx.analyzer.detect_language(q) if q and len(q) >= 20 else None
    if detected is not None:
        return detected
    return FALLBACK_LANGUAGE
