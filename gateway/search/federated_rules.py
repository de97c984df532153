"""Whether the queries of a federated search can be merged (search.md §2.3).

Hits of two queries compare group by group (``federated_order.py``) until a relevancy group meets a
sort group. Two sort groups met before that must be comparable: sorts in the same direction, and
both on field values or both on geo distances. Otherwise the merged order would mean nothing, so the
request is refused with ``invalid_multi_search_query_ranking_rules``. The groups come from the shards
(``shard/query/ranking/sort.py::rule_groups``), which resolve each index's ranking rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from common.errors import ApiError
from gateway.search.multi import Query
from gateway.search.runner import IndexSearch

Group = dict[str, Any]
"""A sort rule's group (``rule_groups``); None stands for a run of relevancy rules."""


def check_comparable(queries: Sequence[Query], results: Sequence[IndexSearch]) -> None:
    """Raises for the first pair of queries (in position order) whose sorts cannot be compared."""
    ruled = list(zip(queries, (result.rule_groups for result in results), strict=True))
    for (first, first_groups), (second, second_groups) in combinations(ruled, 2):
        for a, b in zip(first_groups, second_groups, strict=False):
            if a is None or b is None:
                if a is b:
                    continue  # two relevancy groups compare
                break  # a relevancy group meets a sort: the comparison ends here
            reason = _conflict(a, b)
            if reason is not None:
                raise ApiError(
                    "invalid_multi_search_query_ranking_rules",
                    f"The results of queries #{first.position} and #{second.position} are incompatible:\n"
                    f"  1. {_described(first, a)}\n  2. {_described(second, b)}\n  - {reason}",
                )


def _conflict(a: Group, b: Group) -> str | None:
    if a["geo"] != b["geo"]:
        return "cannot compare a geo distance sort with a field value sort"
    if a["ascending"] != b["ascending"]:
        return "cannot compare an ascending sort with a descending sort"
    return None


def _described(query: Query, group: Group) -> str:
    source = group["source"]
    where = (
        f"`queries[{query.position}].{source}`"
        if source.startswith("sort")
        else f"`{query.index_uid}.{source}`"
    )
    direction = "ascending" if group["ascending"] else "descending"
    name = group["sort"]
    rule = "on a hidden field" if name is None else f"`{name}`"
    return f"{where} (query #{query.position} on index `{query.index_uid}`): {direction} sort rule {rule}"
