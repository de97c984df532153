"""The search parameters of search.md §1.1 (POST body) and §1.2 (GET query string)."""

from __future__ import annotations

from typing import Any

import orjson

from common.errors import ApiError
from common.settings.specs import LOCALES
from common.sort import SortError, parse_sort
from common.validation import Kind, Param, QueryKind, QuerySchema, Schema, Spec
from common.validation.body import Check

DEFAULT_LIMIT = 20


def _strings(code: str, check: Check | None = None) -> Spec:
    return Spec(Kind.ARRAY, nullable=True, code=code, items=Spec(Kind.STRING, check=check))


def _locale(value: str) -> str | None:
    if value in LOCALES:
        return None
    return f"Unsupported locale `{value}`, expected one of {', '.join(f'`{code}`' for code in LOCALES)}."


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
            Kind.STRING,
            code="invalid_search_matching_strategy",
            choices=("last", "all", "frequency", "bm25"),
        ),
        "attributesToSearchOn": _strings("invalid_search_attributes_to_search_on"),
        "rankingScoreThreshold": Spec(
            Kind.NUMBER,
            nullable=True,
            code="invalid_search_ranking_score_threshold",
            check=_ratio("rankingScoreThreshold"),
        ),
        "locales": _strings("invalid_search_locales", _locale),
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
        "personalize": Spec(
            Kind.OBJECT,
            nullable=True,
            code="invalid_search_personalize",
            schema=Schema(
                {
                    "userContext": Spec(
                        Kind.STRING, required=True, code="invalid_search_personalize_user_context"
                    )
                }
            ),
        ),
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
            QueryKind.STRING,
            code="invalid_search_matching_strategy",
            choices=("last", "all", "frequency", "bm25"),
        ),
        "attributesToSearchOn": Param(QueryKind.STRING_LIST, code="invalid_search_attributes_to_search_on"),
        "rankingScoreThreshold": Param(QueryKind.STRING, code="invalid_search_ranking_score_threshold"),
        "locales": Param(QueryKind.STRING_LIST, code="invalid_search_locales", check=_locale),
        "hybridEmbedder": Param(QueryKind.STRING, code="invalid_search_hybrid_query"),
        "hybridSemanticRatio": Param(QueryKind.STRING, code="invalid_search_semantic_ratio"),
        "vector": Param(QueryKind.STRING_LIST, code="invalid_search_vector"),
        "personalizeUserContext": Param(QueryKind.STRING, code="invalid_search_personalize_user_context"),
        "useNetwork": Param(QueryKind.BOOLEAN, code="invalid_search_use_network"),
    }
)


def check_sort_syntax(params: dict[str, Any]) -> None:
    """Sort syntax errors have no index prefix: the gateway answers them; the shards check the
    criteria against the index's settings."""
    try:
        parse_sort(params.get("sort") or [])
    except SortError as error:
        raise error.api_error("invalid_search_sort") from None


def sort_entries(raw: str) -> list[str]:
    """A GET ``sort``: comma-separated, a ``_geoPoint(`` piece absorbing the following ones until one
    ends the criterion (search.md §1.2); surrounding double quotes trimmed."""
    entries: list[str] = []
    for piece in raw.strip('"').split(","):
        if entries and entries[-1].startswith("_geoPoint(") and not entries[-1].endswith((":asc", ":desc")):
            entries[-1] += "," + piece
        else:
            entries.append(piece)
    return entries


def select_search_kind(params: dict[str, Any]) -> dict[str, Any]:
    """search.md §1.3: the parameters of a keyword search, or the contract's error.

    Keyword-only selections drop ``hybrid``; semantic ones keep it for the shard to check the
    embedder (an unknown one is ``invalid_search_embedder``).
    """
    vector, media, hybrid = params.get("vector"), params.get("media"), params.get("hybrid")
    if vector is not None and media is not None:
        raise ApiError(
            "invalid_search_media_and_vector",
            "Invalid request: both `media` and `vector` parameters are present.",
        )
    if (vector is not None or media is not None) and hybrid is None:
        raise ApiError(
            "missing_search_hybrid",
            "Invalid request: missing `hybrid` parameter when `vector` or `media` are present.",
        )
    if hybrid is None:
        return params
    placeholder = not (params.get("q") or "").strip()
    if hybrid.get("semanticRatio", 0.5) == 0.0 or (placeholder and vector is None and media is None):
        return {key: value for key, value in params.items() if key not in ("hybrid", "vector", "media")}
    return params


def query_filter(raw: str) -> Any:
    """A ``filter`` query parameter: its JSON value when it is JSON (the array form), else the string
    itself (search.md §1.2, core.md §3.3)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw


def from_query_string(params: dict[str, Any]) -> dict[str, Any]:
    """The GET parameters in the POST body's shape (search.md §1.2)."""
    converted = dict(params)
    if "filter" in converted:
        converted["filter"] = query_filter(converted["filter"])
    if "sort" in converted:
        converted["sort"] = sort_entries(converted["sort"])
    threshold = converted.pop("rankingScoreThreshold", None)
    if threshold is not None:
        converted["rankingScoreThreshold"] = query_ratio(
            threshold, "rankingScoreThreshold", "invalid_search_ranking_score_threshold"
        )
    embedder = converted.pop("hybridEmbedder", None)
    ratio = converted.pop("hybridSemanticRatio", None)
    if ratio is not None and embedder is None:
        raise ApiError(
            "invalid_search_hybrid_query",
            "`hybridEmbedder` is mandatory when `hybridSemanticRatio` is present",
        )
    vector = converted.pop("vector", None)
    if vector is not None:
        if embedder is None:
            raise ApiError("missing_search_hybrid", "`hybridEmbedder` is mandatory when `vector` is present")
        converted["vector"] = [_vector_item(item) for item in vector if item]
    if embedder is not None:
        hybrid: dict[str, Any] = {"embedder": embedder}
        if ratio is not None:
            hybrid["semanticRatio"] = query_ratio(
                ratio, "hybridSemanticRatio", "invalid_search_semantic_ratio"
            )
        converted["hybrid"] = hybrid
    user_context = converted.pop("personalizeUserContext", None)
    if user_context is not None:
        converted["personalize"] = {"userContext": user_context}
    return converted


def _vector_item(raw: str) -> float:
    """One number of a GET ``vector`` (empty items are skipped, as the reference does)."""
    try:
        return float(raw)
    except ValueError:
        raise ApiError(
            "invalid_search_vector", "Invalid value in parameter `vector`: invalid float literal"
        ) from None


def query_ratio(raw: str, name: str, code: str) -> float:
    """A GET ratio (0 to 1); what is not a number gets the out-of-range message, as the reference's."""
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        label = "semanticRatio" if name == "hybridSemanticRatio" else name
        raise ApiError(
            code,
            f"Invalid value in parameter `{name}`: the value of `{label}` is invalid, "
            "expected a float between `0.0` and `1.0`.",
        )
    return value


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
