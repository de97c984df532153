"""The ``POST /multi-search`` body (search.md §2.1) and the rules that hold between its parts.

The body is validated in one pass with deserr's wording, so errors inside a query carry their full path
(``Invalid value type at `.queries[1].limit`: …``). The rules checked afterwards (federation-only and
non-federated-only options) and every error of running a query are reported for one query, prefixed
with ``Inside `.queries[i]`: ``; inside a multi-search a missing index is a 400, not a 404.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from common.errors import ApiError, invalid_index_uid
from common.validation import Kind, Schema, Spec
from gateway.http.requests import is_valid_index_uid
from gateway.search.params import BODY, check_sort_syntax, select_search_kind

# Absent and default differ for these inside a query (a federated query may not paginate), so a query
# also accepts null for them, meaning absent.
_OPTIONAL = ("offset", "limit", "showPerformanceDetails")
_PAGINATION = ("offset", "limit", "page", "hitsPerPage")
_FEDERATION_ONLY = {
    "personalize": (
        "invalid_multi_search_query_personalization",
        "Using `personalize` is not allowed in federated queries.\n - Hint: remove `personalize` from the"
        " query or remove `federation` from the request\n - Hint: pass `federation.personalize` to"
        " personalize the federated search",
    ),
    "showPerformanceDetails": (
        "invalid_multi_search_query_show_performance_details",
        "Using `showPerformanceDetails` is not allowed in federated queries.\n - Hint: remove"
        " `showPerformanceDetails` from the query or remove `federation` from the request\n - Hint: pass"
        " `federation.showPerformanceDetails` to show performance details of the federated search",
    ),
}


def _index_uid_problem(uid: str) -> str | None:
    return None if is_valid_index_uid(uid) else invalid_index_uid(uid).message


def _weight_problem(weight: float) -> str | None:
    return None if weight >= 0.0 else "the value of `weight` is invalid, expected a positive float (>= 0.0)."


_FEDERATION_OPTIONS = Schema(
    {
        "weight": Spec(Kind.NUMBER, code="invalid_multi_search_weight", check=_weight_problem),
        "remote": Spec(Kind.STRING, nullable=True, code="invalid_multi_search_remote"),
        "queryPosition": Spec(
            Kind.POSITIVE_INTEGER, nullable=True, code="invalid_multi_search_query_position"
        ),
    }
)

QUERY = Schema(
    {
        "indexUid": Spec(
            Kind.STRING,
            required=True,
            code="invalid_index_uid",
            missing_code="missing_index_uid",
            check=_index_uid_problem,
        ),
        **{
            name: dataclasses.replace(spec, nullable=True) if name in _OPTIONAL else spec
            for name, spec in BODY.fields.items()
        },
        "federationOptions": Spec(
            Kind.OBJECT,
            nullable=True,
            code="invalid_multi_search_federation_options",
            schema=_FEDERATION_OPTIONS,
        ),
    }
)

FEDERATION = Schema(
    {
        **{name: BODY.fields[name] for name in ("limit", "offset", "page", "hitsPerPage")},
        "facetsByIndex": Spec(
            Kind.OBJECT,
            code="invalid_multi_search_facets_by_index",
            values=Spec(Kind.ARRAY, nullable=True, items=Spec(Kind.STRING)),
        ),
        "mergeFacets": Spec(
            Kind.OBJECT,
            nullable=True,
            code="invalid_multi_search_merge_facets",
            schema=Schema(
                {
                    "maxValuesPerFacet": Spec(
                        Kind.POSITIVE_INTEGER, nullable=True, code="invalid_multi_search_max_values_per_facet"
                    )
                }
            ),
        ),
        **{name: BODY.fields[name] for name in ("distinct", "showPerformanceDetails", "personalize")},
    }
)

MULTI_SEARCH = Schema(
    {
        "queries": Spec(Kind.ARRAY, required=True, items=Spec(Kind.OBJECT, schema=QUERY)),
        "federation": Spec(Kind.OBJECT, nullable=True, schema=FEDERATION),
    }
)


class QueryError(ApiError):
    """An error of the query at ``position``: prefixed with its path, and never a 404."""

    def __init__(self, position: int, error: ApiError) -> None:
        super().__init__(error.code, f"Inside `.queries[{position}]`: {error.message}")

    @property
    def status(self) -> int:
        return 400 if self.code == "index_not_found" else super().status


@dataclass(frozen=True)
class Query:
    position: int
    index_uid: str
    params: dict[str, Any]
    """The single-search parameters the query runs with (POST body schema, search kind selected)."""
    weight: float


@dataclass(frozen=True)
class MultiSearch:
    queries: list[Query]
    federation: dict[str, Any] | None
    """The validated ``federation`` object; None for a non-federated multi-search."""


Restrict = Callable[[str, dict[str, Any]], dict[str, Any]]
"""A query's parameters under the request's credentials (``Access.restrict_search``)."""


def parse_multi_search(body: object, restrict: Restrict) -> MultiSearch:
    """Validate a whole request; raises the first problem, in query order."""
    fields = MULTI_SEARCH.validate(body)
    federation = fields.get("federation")
    queries = [_query(position, raw, federation, restrict) for position, raw in enumerate(fields["queries"])]
    return MultiSearch(queries, federation)


def _query(
    position: int, raw: dict[str, Any], federation: dict[str, Any] | None, restrict: Restrict
) -> Query:
    options = raw.get("federationOptions")
    params = {
        name: value
        for name, value in raw.items()
        if name not in ("indexUid", "federationOptions") and not (name in _OPTIONAL and value is None)
    }
    try:
        params = restrict(raw["indexUid"], params)
        if federation is None:
            _check_non_federated(options)
        else:
            _check_federated(params, federation, options)
            if federation.get("distinct") is not None:
                # Each index deduplicates its own hits (and checks the attribute); the merge then
                # deduplicates across queries (federation.py).
                params["distinct"] = federation["distinct"]
        check_sort_syntax(params)
        params = select_search_kind(params)
    except ApiError as error:
        raise QueryError(position, error) from None
    weight = 1.0 if options is None else options.get("weight", 1.0)
    return Query(position, raw["indexUid"], params, weight)


def _check_non_federated(options: dict[str, Any] | None) -> None:
    if options is not None:
        raise ApiError(
            "invalid_multi_search_federation_options",
            "Using `federationOptions` is not allowed in a non-federated search.\n - Hint: remove"
            " `federationOptions` from the query or add `federation` to the request.",
        )


def _check_federated(
    params: dict[str, Any], federation: dict[str, Any], options: dict[str, Any] | None
) -> None:
    for name in _PAGINATION:
        if params.get(name) is not None:
            raise ApiError(
                "invalid_multi_search_query_pagination",
                "Using pagination options is not allowed in federated queries.\n - Hint: remove"
                f" `{name}` from the query or remove `federation` from the request\n - Hint: pass"
                " `federation.limit` and `federation.offset` for pagination in federated search",
            )
    if params.get("facets"):
        raise ApiError(
            "invalid_multi_search_query_facets",
            "Using facet options is not allowed in federated queries.\n - Hint: remove `facets` from the"
            " query or remove `federation` from the request\n - Hint: pass `federation.facetsByIndex` for"
            " facets in federated search",
        )
    for name, (code, message) in _FEDERATION_ONLY.items():
        if params.get(name) is not None:
            raise ApiError(code, message)
    if params.get("distinct") is not None and federation.get("distinct") is not None:
        raise ApiError(
            "invalid_multi_search_distinct",
            "Using `distinct` in a federated query is not allowed when `federation.distinct` is set.\n"
            " - Hint: remove `distinct` from the query or remove `distinct` from the federation",
        )
    remote = None if options is None else options.get("remote")
    if remote is not None:
        raise ApiError(
            "invalid_multi_search_remote",
            f"Invalid `federationOptions.remote`: remote `{remote}` is not registered: this server has no"
            " network of remotes.",
        )
