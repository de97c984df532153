"""The order of hits from different queries in a federated search (search.md §2.3).

Each hit carries its weighted score sequence as groups (``shard/query/ranking/score.py::score_groups``):
a run of relevancy rules folded into one score, multiplied here by the query's weight, or a sort rule's
``[ascending, value]``. Two hits compare group by group and the first difference decides: scores higher
first, sort values in their own order (numbers before strings, missing last; geo: the distance); two
queries whose sorts meet in opposite directions never get here (``federated_rules.py`` refuses them).
Where the groups are not comparable (a score against a sort value, as when a bucket was left unranked
or a placeholder query meets a keyword one), the hit with more remaining groups wins. Otherwise, and
when a sequence ends (the contract says nothing of that case; a placeholder search without sort has
no group at all), the higher weighted ranking score wins, then the lower query position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.search.order import sort_value_order


@dataclass(frozen=True)
class Weighted:
    """A hit as the federated merge sees it."""

    groups: tuple[Any, ...]
    weight: float
    score: float
    position: int

    def __lt__(self, other: Weighted) -> bool:
        return compare(self, other) < 0


def compare(a: Weighted, b: Weighted) -> int:
    """Negative when ``a`` comes first, positive when ``b`` does, 0 when nothing separates them."""
    for group_a, group_b in zip(a.groups, b.groups, strict=False):
        decided = _compare_group(group_a, a.weight, group_b, b.weight)
        if decided is None:
            remaining_a, remaining_b = len(a.groups), len(b.groups)
            if remaining_a != remaining_b:
                return -1 if remaining_a > remaining_b else 1
            break
        if decided:
            return decided
    weighted_a, weighted_b = a.score * a.weight, b.score * b.weight
    if weighted_a != weighted_b:
        return -1 if weighted_a > weighted_b else 1
    return a.position - b.position


def _compare_group(a: Any, weight_a: float, b: Any, weight_b: float) -> int | None:
    """-1, 0 or 1 as for ``compare``; None when the two groups do not compare."""
    a_sorts, b_sorts = isinstance(a, list), isinstance(b, list)
    if a_sorts != b_sorts:
        return None
    if a_sorts:
        order_a, order_b = sort_value_order(a), sort_value_order(b)
        return 0 if order_a == order_b else -1 if order_a < order_b else 1
    score_a, score_b = a * weight_a, b * weight_b
    return 0 if score_a == score_b else -1 if score_a > score_b else 1
