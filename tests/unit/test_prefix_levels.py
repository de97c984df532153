"""The prefixes table's position levels are the word position rule's costs (``shard/index/prefixes.py``)."""

from __future__ import annotations

from shard.index.prefixes import LEVELS, level_term, level_terms, position_level
from shard.query.ranking.positional import MAX_POSITION_COST, word_position_cost


def test_a_level_is_the_cost_of_a_first_query_word_there() -> None:
    assert [position_level(p) for p in range(3000)] == [word_position_cost(p, 0) for p in range(3000)]
    assert list(LEVELS) == list(range(1, MAX_POSITION_COST + 1))


def test_each_short_prefix_takes_the_level_of_its_earliest_word() -> None:
    words = ("north", "nor", "ab", "north", "abbey")
    positions = (0, 1, 2, 3, 9)
    # "n", "no", "nor" start the field (level 0, the START mark); "a", "ab" first at 2; "abb" at 9.
    assert sorted(level_terms(words, positions)) == sorted(
        [level_term("a", 2), level_term("ab", 2), level_term("abb", 4)]
    )
