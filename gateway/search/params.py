"""The search parameters of search.md §1.1 (POST body) and §1.2 (GET query string)."""

from __future__ import annotations

from typing import Any

from common.errors import ApiError
from common.validation import Kind, Param, QueryKind, QuerySchema, Schema, Spec
from common.validation.body import Check

DEFAULT_LIMIT = 20


def _strings(code: str) -> Spec:
    return Spec(Kind.ARRAY, nullable=True, code=code, items=Spec(Kind.STRING))


def _ratio(name: str) -> Check:
    def check(value: float) -> str | None:
        if 0.0 <= value <= 1.0:
            return None
        return f"the value of `{name}` is invalid, expected a float between `0.0` and `1.0`."

    return check


BODY = Schema(
    {
        "q": Spec(Kind.STRING, nullable=True, code="invalid_search_q"),
        "offset": Spec(Kind.POSITIVE_INTEGER, code="invalid_search_offset"),
        "limit": Spec(Kind.POSITIVE_INTEGER, code="invalid_search_limit"),
        "page": Spec(Kind.POSITIVE_INTEGER, nullable=True, code="invalid_search_page"),
        "hitsPerPage": Spec(Kind.POSITIVE_INTEGER, nullable=True, code="invalid_search_hits_per_page"),
        "attributesToRetrieve": _strings("invalid_search_attributes_to_retrieve"),
        "retrieveVectors": Spec(Kind.BOOLEAN, code="invalid_search_retrieve_vectors"),
        "attributesToCrop": _strings("invalid_search_attributes_to_crop"),
        "cropLength": Spec(Kind.POSITIVE_INTEGER, code="invalid_search_crop_length"),
        "cropMarker": Spec(Kind.STRING, code="invalid_search_crop_marker"),
        "attributesToHighlight": _strings("invalid_search_attributes_to_highlight"),
        "showMatchesPosition": Spec(Kind.BOOLEAN, code="invalid_search_show_matches_position"),
        "showRankingScore": Spec(Kind.BOOLEAN, code="invalid_search_show_ranking_score"),
        "showRankingScoreDetails": Spec(Kind.BOOLEAN, code="invalid_search_show_ranking_score_details"),
        "showPerformanceDetails": Spec(Kind.BOOLEAN, code="invalid_search_show_performance_details"),
        "filter": Spec(Kind.STRING | Kind.ARRAY, nullable=True, code="invalid_search_filter"),
        "sort": _strings("invalid_search_sort"),
        "distinct": Spec(Kind.STRING, nullable=True, code="invalid_search_distinct"),
        "facets": _strings("invalid_search_facets"),
        "highlightPreTag": Spec(Kind.STRING, code="invalid_search_highlight_pre_tag"),
        "highlightPostTag": Spec(Kind.STRING, code="invalid_search_highlight_post_tag"),
        "matchingStrategy": Spec(
            Kind.STRING, code="invalid_search_matching_strategy", choices=("last", "all", "frequency")
        ),
        "attributesToSearchOn": _strings("invalid_search_attributes_to_search_on"),
        "rankingScoreThreshold": Spec(
            Kind.NUMBER,
            nullable=True,
            code="invalid_search_ranking_score_threshold",
            check=_ratio("rankingScoreThreshold"),
        ),
        "locales": _strings("invalid_search_locales"),
        "hybrid": Spec(
            Kind.OBJECT,
            nullable=True,
            code="invalid_search_hybrid_query",
            schema=Schema(
                {
                    "embedder": Spec(Kind.STRING, required=True),
                    "semanticRatio": Spec(
                        Kind.NUMBER, code="invalid_search_semantic_ratio", check=_ratio("semanticRatio")
                    ),
                }
            ),
        ),
        "vector": Spec(Kind.ARRAY, nullable=True, code="invalid_search_vector", items=Spec(Kind.NUMBER)),
        "media": Spec(Kind.ANY, nullable=True, code="invalid_search_media"),
        "personalize": Spec(Kind.OBJECT, nullable=True, code="invalid_search_personalize"),
        "useNetwork": Spec(Kind.BOOLEAN, nullable=True, code="invalid_search_use_network"),
    }
)

QUERY = QuerySchema(
    {
        "q": Param(QueryKind.STRING, code="invalid_search_q"),
        "offset": Param(QueryKind.POSITIVE_INTEGER, code="invalid_search_offset"),
        "limit": Param(QueryKind.POSITIVE_INTEGER, code="invalid_search_limit"),
        "page": Param(QueryKind.POSITIVE_INTEGER, code="invalid_search_page"),
        "hitsPerPage": Param(QueryKind.POSITIVE_INTEGER, code="invalid_search_hits_per_page"),
        "attributesToRetrieve": Param(QueryKind.STRING_LIST, code="invalid_search_attributes_to_retrieve"),
        "retrieveVectors": Param(QueryKind.BOOLEAN, code="invalid_search_retrieve_vectors"),
        "attributesToCrop": Param(QueryKind.STRING_LIST, code="invalid_search_attributes_to_crop"),
        "cropLength": Param(QueryKind.POSITIVE_INTEGER, code="invalid_search_crop_length"),
        "cropMarker": Param(QueryKind.STRING, code="invalid_search_crop_marker"),
        "attributesToHighlight": Param(QueryKind.STRING_LIST, code="invalid_search_attributes_to_highlight"),
        "showMatchesPosition": Param(QueryKind.BOOLEAN, code="invalid_search_show_matches_position"),
        "showRankingScore": Param(QueryKind.BOOLEAN, code="invalid_search_show_ranking_score"),
        "showRankingScoreDetails": Param(QueryKind.BOOLEAN, code="invalid_search_show_ranking_score_details"),
        "showPerformanceDetails": Param(QueryKind.BOOLEAN, code="invalid_search_show_performance_details"),
        "filter": Param(QueryKind.STRING, code="invalid_search_filter"),
        "sort": Param(QueryKind.STRING, code="invalid_search_sort"),
        "distinct": Param(QueryKind.STRING, code="invalid_search_distinct"),
        "facets": Param(QueryKind.STRING_LIST, code="invalid_search_facets"),
        "highlightPreTag": Param(QueryKind.STRING, code="invalid_search_highlight_pre_tag"),
        "highlightPostTag": Param(QueryKind.STRING, code="invalid_search_highlight_post_tag"),
        "matchingStrategy": Param(
            QueryKind.STRING, code="invalid_search_matching_strategy", choices=("last", "all", "frequency")
        ),
        "attributesToSearchOn": Param(QueryKind.STRING_LIST, code="invalid_search_attributes_to_search_on"),
        "rankingScoreThreshold": Param(QueryKind.STRING, code="invalid_search_ranking_score_threshold"),
        "locales": Param(QueryKind.STRING_LIST, code="invalid_search_locales"),
        "hybridEmbedder": Param(QueryKind.STRING, code="invalid_search_hybrid_query"),
        "hybridSemanticRatio": Param(QueryKind.STRING, code="invalid_search_semantic_ratio"),
        "vector": Param(QueryKind.STRING_LIST, code="invalid_search_vector"),
        "personalizeUserContext": Param(QueryKind.STRING, code="invalid_search_personalize_user_context"),
        "useNetwork": Param(QueryKind.BOOLEAN, code="invalid_search_use_network"),
    }
)

# Parameters validated by the schemas above whose behaviour comes with later work (ranking details,
# highlighting, filters, facets, hybrid search). Sending one with a non-default value is refused
# rather than silently ignored, so that no client gets results that look right but are not.
_PENDING = {
    "filter": "invalid_search_filter",
    "sort": "invalid_search_sort",
    "distinct": "invalid_search_distinct",
    "facets": "invalid_search_facets",
    "hybrid": "invalid_search_hybrid_query",
    "vector": "invalid_search_vector",
    "media": "invalid_search_media",
    "personalize": "invalid_search_personalize",
}


def refuse_pending(params: dict[str, Any]) -> None:
    for name, code in _PENDING.items():
        if params.get(name) not in (None, [], ""):
            raise ApiError(code, f"The search parameter `{name}` is not supported yet by this server.")


def page_window(params: dict[str, Any]) -> tuple[int, int, bool]:
    """(offset, limit, page mode): ``page``/``hitsPerPage`` switch to exhaustive pagination."""
    page, per_page = params.get("page"), params.get("hitsPerPage")
    if page is None and per_page is None:
        return params.get("offset", 0), params.get("limit", DEFAULT_LIMIT), False
    page = 1 if page is None else page
    per_page = DEFAULT_LIMIT if per_page is None else per_page
    if page == 0:
        return 0, 0, True
    return (page - 1) * per_page, per_page, True
