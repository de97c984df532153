"""One shard's part of a search: parse, match, rank, then build the page's hits.

The shard returns its best ``offset + limit`` hits (capped by ``maxTotalHits``) with their ranks;
the gateway merges shards by ranks, then by insertion order, which every shard count agrees on.
A semantic search ranks by the query's vector instead (``semantic.py``); a hybrid one runs both
legs, the nearest-neighbour search on the vector thread while the keyword leg ranks, and returns
them apart: the gateway fuses the shards' merged lists (search.md §7.6).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from pyroaring import BitMap

from common.documents.projection import VECTORS, select_attributes, vectors_field, without_vectors
from common.settings.pagination import capped_window, max_total_hits
from common.timing import Steps, lap
from common.typo_caps import Found, LookupKey
from shard.geo.points import geo_distance
from shard.highlight import NO_MATCH, FormatOptions, HitFormatter, QueryMatcher
from shard.index.codec import DocumentCodec
from shard.index.env import StoreEnv, Txn
from shard.index.read_cache import CacheRef
from shard.index.sequence import read_sequences
from shard.index.settings import Settings, displayed_attributes
from shard.index.state import load_state
from shard.query.candidates import negated_documents, query_candidates, query_language
from shard.query.context import SearchContext
from shard.query.derivations import Derivations, derive, typo_lookup
from shard.query.distinct import Distinct, distinct_attribute
from shard.query.facet_reply import facet_reply
from shard.query.highlighting import DerivationMatcher
from shard.query.parse import ParsedQuery, parse_query
from shard.query.pinned import pinned_documents
from shard.query.ranking.bm25_rule import BM25, KeywordRanker, term_limit, term_statistics
from shard.query.ranking.bucket_sort import RankedDoc
from shard.query.ranking.sort import first_geo_point, query_sort, rule_groups
from shard.query.ranking.stem_tier import count_terms, hit_scores
from shard.query.search_filter import filtered_out
from shard.query.semantic import QueryVector, SemanticLeg, VectorSpace, query_vector
from shard.query.typos import TypoCaps
from shard.vector.reads import shown_vectors

Entry = list[Any]
"""``[sequence, sort key, score, score details, hit, distinct values or None, score groups]``: what the
gateway merges, deduplicates and renders (the groups order federated hits)."""
HIT = 4
"""The hit's place in an entry: the reply sends it apart (``SearchReply.hit_documents``)."""


@dataclass(frozen=True)
class SearchResult:
    entries: list[Entry]
    candidates: int
    max_total_hits: int
    term_counts: list[int] | None = None
    """With ``countTerms``: each query term's matching documents without its stem, then with it, for
    the frequency strategy (``stem_tier.count_terms``)."""
    facets: dict[str, Any] | None = None
    """With ``facets`` or ``facetSearch``: this shard's counts over the candidates (shard/facet/)."""
    rule_groups: list[dict[str, Any] | None] | None = None
    """With ``ruleGroups`` (federated queries): the query's rules, grouped as hits are compared."""
    deduplicated: bool = False
    """The query's ``distinct`` or the index's ``distinctAttribute`` applied."""
    pinned: list[tuple[str, Entry]] | None = None
    """With ``pinned``: the pinned documents this shard holds that the filter keeps, as hits, with
    their external ids (``shard/query/pinned.py``); not in ``entries`` nor ``candidates``."""
    semantic_entries: list[Entry] | None = None
    """A semantic or hybrid search's vector leg, best first (``entries`` is then the keyword leg's,
    empty for a semantic-only search, whose ``candidates`` are the vector leg's)."""
    union_candidates: int = 0
    """Hybrid: the documents either leg keeps."""
    union_facets: dict[str, Any] | None = None
    """Hybrid with ``facets``: the counts over both legs' documents."""
    capped_typos: tuple[LookupKey, ...] = ()
    """The typo lookups whose words a cap may cut over the whole index (``typos.TypoCaps``)."""
    typo_words: list[Found] | None = None
    """With ``typoLookups``: this shard's words of each lookup, for the gateway to cap index-wide."""
    degraded: bool = False
    """The search cutoff left some of the ranking undone (``SearchContext.timed_out``)."""


VectorLookup = Callable[[int, str], VectorSpace]
"""(internal index id, embedder name) -> that embedder's vectors on this shard."""


def search(
    env: StoreEnv,
    codec: DocumentCodec,
    txn: Txn,
    index_id: int,
    index_uid: str,
    settings: Settings,
    params: dict[str, Any],
    cached: CacheRef | None = None,
    steps: Steps | None = None,
    shards: int = 1,
    *,
    vectors: VectorLookup,
) -> SearchResult:
    """``cached``: the shard's record cache and its generation when ``txn`` began; ``steps``: timed
    when the query asked for ``showPerformanceDetails``; ``shards``: how many shards hold the index;
    ``vectors``: the shard's vector spaces (semantic and hybrid searches)."""
    caps = TypoCaps.from_params(params, shards)

    def context() -> SearchContext:
        state = load_state(env, txn, index_id)
        return SearchContext(
            env,
            codec,
            txn,
            index_id,
            index_uid,
            settings,
            state,
            cache_ref=cached,
            shards=shards,
            typo_caps=caps,
        )

    result = _search(context, params, steps, partial(vectors, index_id))
    return replace(result, capped_typos=tuple(caps.flagged)) if caps.flagged else result


def _search(
    context: Callable[[], SearchContext],
    params: dict[str, Any],
    steps: Steps | None,
    space_of: Callable[[str], VectorSpace],
) -> SearchResult:
    ctx = context()
    settings = ctx.settings
    if params.get("typoLookups") is not None:
        # The gateway caps these lookups over the whole index (gateway/search/typo_caps.py).
        found = [typo_lookup(ctx, (word, typos, prefix)) for word, typos, prefix in params["typoLookups"]]
        return SearchResult([], 0, max_total_hits(settings), typo_words=found)
    semantic = query_vector(settings, params, space_of)

    def union(queries: list[dict[str, Any]], scored: bool) -> BitMap:
        """The union of several queries' candidates, each query in its own context."""
        subs = [{**params, **sub} for sub in queries]
        for sub in queries:
            ctx.typo_caps.settle(sub)  # the words a query's own term-count round settled
        return BitMap.union(BitMap(), *(query_candidates(context(), sub, scored, space_of) for sub in subs))

    if params.get("facetUnion") is not None:
        # Facets over several queries' candidates (federated facetsByIndex), before any threshold.
        matched = union(params["facetUnion"], scored=False)
        return SearchResult(
            [], len(matched), max_total_hits(settings), facets=facet_reply(ctx, matched, params)
        )
    if params.get("countUnion") is not None:
        # A federated total: the documents that any of an index's queries keeps. Under a
        # distinctAttribute setting the queries deduplicate, and the gateway sums what each keeps.
        if settings.get("distinctAttribute") is not None:
            return SearchResult([], 0, max_total_hits(settings), deduplicated=True)
        return SearchResult([], len(union(params["countUnion"], scored=True)), max_total_hits(settings))
    ctx.restrict_to(params.get("attributesToSearchOn"))
    locales = tuple(params.get("locales") or ())
    strategy = params.get("matchingStrategy", "last")
    query = parse_query(ctx.analyzer, params.get("q"), locales, term_limit(strategy))
    cap = max_total_hits(settings)
    wanted = sum(capped_window(params.get("offset", 0), params.get("limit", 20), cap))
    derivations = derive(ctx, query, query_language(ctx, params.get("q"), locales))
    lap(steps, "resolve query")
    if params.get("countTerms"):
        counts = (term_statistics if strategy == BM25 else count_terms)(ctx, query, derivations)
        lap(steps, "count terms")
        return SearchResult([], 0, cap, counts)
    unfiltered = filtered_out(ctx, params)
    pinned = pinned_documents(ctx, params, unfiltered)
    excluded = negated_documents(ctx, query) | unfiltered | BitMap(pinned)
    lap(steps, "filter")
    criteria = query_sort(ctx, params.get("sort"))
    distinct_field = distinct_attribute(ctx, params)
    if semantic is not None:
        # The vector leg ranks every live document the filter keeps (negated words are keyword's).
        leg = _semantic_leg(ctx, semantic, params, criteria, distinct_field, unfiltered | BitMap(pinned))
        if params.get("semanticOnly"):
            return _semantic_only(ctx, leg, params, wanted, cap, steps, pinned)
    distinct = None if distinct_field is None else Distinct(ctx, distinct_field)
    ranker = KeywordRanker(
        ctx,
        query,
        derivations,
        strategy=strategy,
        threshold=params.get("rankingScoreThreshold"),
        term_counts=params.get("termCounts"),
        sort=criteria,
        distinct=distinct,
    )
    universe = (ctx.state.live if query.placeholder else ranker.universe()) - excluded
    if distinct is not None and params.get("distinctValues") is not None:
        # The gateway's second round: the candidates the page's distinct values leave (see Distinct)
        # and the threshold keeps.
        others = distinct.docs_of(params["distinctValues"])
        if semantic is None:
            remaining = ranker.count(universe - others, cap)
        else:
            # Hybrid whose vector leg the gateway used: the documents either leg keeps.
            remaining = len((ranker.kept(universe) | leg.kept()) - others)  # threshold: a full pass
        lap(steps, "count distinct")
        return SearchResult([], remaining, cap)
    if semantic is not None:
        leg.prefetch(wanted)
    if query.placeholder and not ranker.rules and distinct is None:
        ranked = [RankedDoc(doc_id, ()) for doc_id in _first(universe, wanted)]
        candidates = len(universe)
    else:
        outcome = ranker.rank(universe, wanted)
        ranked, candidates = outcome.docs, outcome.candidates
        if distinct is not None and wanted == 0:
            # No page, so no second round: the count is the candidates the threshold keeps.
            candidates = ranker.count(universe, cap)
    lap(steps, "rank")
    semantic_entries, union_count, union_facets = None, 0, None
    if semantic is not None:
        semantic_ranked = leg.rank(wanted, cap)
        lap(steps, "vector rank")
        semantic_entries = _entries(
            ctx, query, derivations, semantic_ranked, params, first_geo_point(criteria), leg.distinct
        )
        union_count = len(leg.kept() | (universe - ranker.dropped()))
        union_facets = facet_reply(ctx, leg.universe | BitMap(pinned), params)
    geo_point = first_geo_point(criteria)
    entries = _entries(ctx, query, derivations, ranked, params, geo_point, distinct)
    pinned_entries = _entries(
        ctx, query, derivations, [RankedDoc(doc, ()) for doc in pinned], params, geo_point, None
    )
    lap(steps, "format hits")
    facets = facet_reply(ctx, universe | BitMap(pinned), params)
    if facets is not None:
        lap(steps, "facets")
    groups = rule_groups(ranker.rules) if params.get("ruleGroups") else None
    return SearchResult(
        entries,
        candidates,
        cap,
        facets=facets,
        rule_groups=groups,
        deduplicated=distinct is not None,
        pinned=list(zip(pinned.values(), pinned_entries, strict=True)),
        semantic_entries=semantic_entries,
        union_candidates=union_count,
        union_facets=union_facets,
        degraded=ctx.timed_out,
    )


def _semantic_leg(
    ctx: SearchContext,
    semantic: QueryVector,
    params: dict[str, Any],
    criteria: list[Any],
    distinct_field: str | None,
    left_out: BitMap,
) -> SemanticLeg:
    """The vector leg over the live documents not ``left_out``; /similar (``similarTo``, whose target
    the filter left out) ranks by similarity alone, without distinct."""
    similar = params.get("similarTo")
    return SemanticLeg(
        ctx,
        semantic,
        left_out,
        threshold=params.get("rankingScoreThreshold"),
        sort=criteria,
        distinct_field=None if similar is not None else distinct_field,
        similar=similar is not None,
    )


def _semantic_only(
    ctx: SearchContext,
    leg: SemanticLeg,
    params: dict[str, Any],
    wanted: int,
    cap: int,
    steps: Steps | None,
    pinned: dict[int, str],
) -> SearchResult:
    """A search ranked by its vector alone: no keyword query, so nothing is highlighted as matching."""
    placeholder = ParsedQuery()
    if leg.distinct is not None and params.get("distinctValues") is not None:
        remaining = leg.ranker.count(leg.universe - leg.distinct.docs_of(params["distinctValues"]), cap)
        lap(steps, "count distinct")
        return SearchResult([], remaining, cap)
    ranked = leg.rank(wanted, cap)
    candidates = leg.candidates
    if leg.distinct is not None and wanted == 0:
        candidates = leg.ranker.count(leg.universe, cap)
    lap(steps, "vector rank")
    entries = _entries(ctx, placeholder, [], ranked, params, None, leg.distinct)
    pinned_entries = _entries(
        ctx, placeholder, [], [RankedDoc(doc, ()) for doc in pinned], params, None, None
    )
    lap(steps, "format hits")
    facets = facet_reply(ctx, leg.universe | BitMap(pinned), params)
    if facets is not None:
        lap(steps, "facets")
    groups = rule_groups(leg.ranker.rules) if params.get("ruleGroups") else None
    return SearchResult(
        [],
        candidates,
        cap,
        facets=facets,
        rule_groups=groups,
        deduplicated=leg.distinct is not None,
        pinned=list(zip(pinned.values(), pinned_entries, strict=True)),
        semantic_entries=entries,
    )


def _first(docs: BitMap, count: int) -> list[int]:
    if count <= 0 or not docs:
        return []
    if count >= len(docs):
        return list(docs)
    return list(docs[:count])


def _entries(
    ctx: SearchContext,
    query: ParsedQuery,
    derivations: list[Derivations],
    ranked: list[RankedDoc],
    params: dict[str, Any],
    geo_point: tuple[float, float] | None,
    distinct: Distinct | None,
) -> list[Entry]:
    if not ranked:
        return []
    displayed = displayed_attributes(ctx.settings)
    retrieve = params.get("attributesToRetrieve")
    if retrieve is not None and "*" in retrieve:
        retrieve = None
    # search.md §1.6: with retrieveVectors, _vectors (all of it) if displayable, whatever is retrieved
    show_vectors = bool(params.get("retrieveVectors")) and (displayed is None or VECTORS in displayed)
    # The gateway's feedback round (gateway/search/feedback.py) reads the best hits' vectors whatever
    # is displayed: they never reach a response.
    show_vectors = show_vectors or bool(params.get("feedbackVectors"))
    formatter = _formatter(ctx, query, derivations, params, displayed)
    sequences = read_sequences(ctx.env, ctx.txn, ctx.index_id, [doc.doc_id for doc in ranked])
    entries: list[Entry] = []
    for doc, sequence in zip(ranked, sequences, strict=True):
        document = ctx.document(doc.doc_id)
        if document is None:
            continue
        if displayed is not None:
            document = select_attributes(document, displayed)
        hit = without_vectors(document if retrieve is None else select_attributes(document, retrieve))
        if show_vectors:
            embedders = ctx.settings.get("embedders") or {}
            own = vectors_field(document)
            hit = {**hit, VECTORS: shown_vectors(ctx.env, ctx.txn, ctx.index_id, embedders, doc.doc_id, own)}
        distance = None if geo_point is None else geo_distance(hit, geo_point)
        if distance is not None:
            hit = {**hit, "_geoDistance": distance}
        if formatter is not None:
            formatted, positions = formatter.format(document)
            hit = dict(hit)
            if formatted is not None:
                hit["_formatted"] = formatted
            if positions is not None:
                hit["_matchesPosition"] = positions
        values = None if distinct is None else distinct.values[doc.doc_id]
        key, relevancy, shown, groups = hit_scores(doc)
        entries.append([sequence, key, relevancy, shown, hit, values, groups])
    return entries


def _formatter(
    ctx: SearchContext,
    query: ParsedQuery,
    derivations: list[Derivations],
    params: dict[str, Any],
    displayed: tuple[str, ...] | None,
) -> HitFormatter | None:
    """None when the query asks for neither ``_formatted`` nor ``_matchesPosition``."""
    if not any(
        params.get(name) for name in ("attributesToHighlight", "attributesToCrop", "showMatchesPosition")
    ):
        return None
    options = FormatOptions.from_search(params, displayed)
    matcher: QueryMatcher = (
        NO_MATCH if query.placeholder else DerivationMatcher(derivations, query.stop_words)
    )
    return HitFormatter(options, matcher, ctx.analyzer)
