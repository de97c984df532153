"""Score groups (shard side) and the federated comparison of hits across queries (search.md §2.3)."""

from __future__ import annotations

import itertools

from gateway.search.federated_order import Weighted, compare
from shard.query.ranking.score import Rank, details, fold, score_groups

WORDS = Rank("words", ((2, 3),), {"matchingWords": 2, "maxMatchingWords": 3})
TYPO = Rank("typo", ((1, 2),), {"typoCount": 1, "maxTypoCount": 1})
PRICE = Rank("price:asc", (), {"value": 4.0}, (True, 4.0))
SECRET = Rank("secret:desc", (), {"value": "x"}, (False, "x"), hidden=True)


def test_groups_fold_runs_of_relevancy_rules_around_sort_values() -> None:
    assert score_groups([WORDS, TYPO, PRICE, TYPO]) == [fold([(2, 3), (1, 2)]), [True, 4.0], 0.5]
    assert score_groups([PRICE, SECRET]) == [[True, 4.0], [False, "x"]]
    assert score_groups([]) == []


def test_hidden_sort_rules_are_redacted_with_their_order() -> None:
    rendered = details([WORDS, SECRET, PRICE])
    assert list(rendered) == ["words", "<hidden-rule-1>", "price:asc"]
    assert rendered["<hidden-rule-1>"] == {"order": 1, "value": "<hidden>"}
    assert rendered["price:asc"] == {"order": 2, "value": 4.0}


def hit(*groups: object, weight: float = 1.0, score: float = 1.0, position: int = 0) -> Weighted:
    return Weighted(tuple(groups), weight, score, position)


def test_scores_are_weighted_and_higher_first() -> None:
    assert compare(hit(0.5, position=0), hit(0.4, position=1)) < 0
    assert compare(hit(0.5, weight=0.5), hit(0.4, position=1)) > 0


def test_sort_values_compare_as_sort_values() -> None:
    asc = [True, 3.0], [True, 10.0], [True, "a"], [True, None]
    for better, worse in itertools.pairwise(asc):
        assert compare(hit(list(better)), hit(list(worse), position=1)) < 0
    assert compare(hit([False, 10.0]), hit([False, 3.0], position=1)) < 0
    assert compare(hit([False, 3.0]), hit([False, "z"], position=1)) < 0  # numbers first both ways
    assert compare(hit([False, "b"]), hit([False, "a"], position=1)) < 0
    # The first difference decides, before any later group or the weighted score.
    assert compare(hit(0.9, [True, 5.0], score=0.1), hit(0.9, [True, 6.0], score=0.9, position=1)) < 0


def test_incomparable_groups_more_remaining_then_score_then_position() -> None:
    assert compare(hit([True, 1.0]), hit(0.2, [True, 9.0], position=1)) > 0
    assert compare(hit([True, 1.0]), hit([True, 1.0], position=1)) < 0
    assert compare(hit([True, 1.0], position=2), hit([True, 1.0], position=1)) > 0


def test_an_ended_sequence_falls_back_to_the_weighted_score() -> None:
    """A placeholder search without sort has no group: its 1.0 beats a keyword hit's 0.6."""
    assert compare(hit(score=1.0, position=1), hit(0.6, score=0.6)) < 0
    assert compare(hit(0.6, [True, 2.0], score=0.6), hit(0.6, score=0.9, position=1)) > 0
