"""The word position rule's cost per occurrence, as measured on the reference engine."""

from __future__ import annotations

import pytest

from shard.query.ranking.positional import word_position_cost


@pytest.mark.parametrize(
    ("position", "cost"),
    [
        (0, 0),
        (1, 1),
        (4, 2),
        (11, 4),
        (15, 5),
        (16, 6),
        (23, 6),
        (24, 7),
        (64, 7),
        (65, 8),
        (257, 9),
        (1025, 10),
    ],
)
def test_first_query_word(position: int, cost: int) -> None:
    assert word_position_cost(position, 0) == cost


@pytest.mark.parametrize(("position", "cost"), [(0, 1), (1, 0), (2, 1), (15, 5), (16, 6), (24, 7), (65, 8)])
def test_second_query_word_counts_its_distance_only_near_the_start(position: int, cost: int) -> None:
    # Before position 16 the distance to the query position counts (16 -> 15 would cost 5).
    assert word_position_cost(position, 1) == cost
