"""The relevancy score fold (search.md §7.5) and the rule list (§7.4)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from shard.query.ranking.rules import configured_rules
from shard.query.ranking.score import Rank, details, fold, sort_key


def test_fold_matches_the_contract_examples() -> None:
    assert fold([]) == 1.0
    assert fold([(4, 4)]) == 1.0
    assert fold([(3, 4)]) == 0.75  # proximity: two words at distance 2
    # words 2/3 then typo 1/2: (2-1)*2 + 1 = 3 out of 6
    assert fold([(2, 3), (1, 2)]) == 0.5


steps = st.lists(
    st.tuples(st.integers(1, 6), st.integers(1, 6)).map(lambda rm: (min(rm), max(rm))), max_size=5
)


@given(st.lists(steps, min_size=2, max_size=6))
def test_scores_follow_the_lexicographic_bucket_order(ranked: list[list[tuple[int, int]]]) -> None:
    """Two documents' step sequences with the same out-of values compare like their scores."""
    shape = [out_of for _, out_of in ranked[0]]
    comparable = [seq for seq in ranked if [out_of for _, out_of in seq] == shape]
    for left, right in itertools.combinations(comparable, 2):
        left_key = [rank / out_of for rank, out_of in left]
        right_key = [rank / out_of for rank, out_of in right]
        if left_key > right_key:
            assert fold(left) >= fold(right)


def test_details_number_rules_and_score_each_one() -> None:
    ranks = [
        Rank("words", ((2, 2),), {"matchingWords": 2, "maxMatchingWords": 2}),
        Rank("exactness", ((1, 3), (2, 3)), {"matchType": "noExactMatch"}),
    ]
    rendered = details(ranks)
    assert list(rendered) == ["words", "exactness"]
    assert rendered["words"] == {"order": 0, "matchingWords": 2, "maxMatchingWords": 2, "score": 1.0}
    assert rendered["exactness"]["order"] == 1
    assert rendered["exactness"]["score"] == fold([(1, 3), (2, 3)])
    assert sort_key(ranks) == [1.0, 1 / 3, 2 / 3]


def test_words_comes_first_unless_every_term_must_match() -> None:
    names = [rule.name for rule in configured_rules(["typo", "words", "exactness", "sort"], "last")]
    assert names == ["words", "typo", "exactness"]
    assert [rule.name for rule in configured_rules(None, "all")] == [
        "typo",
        "proximity",
        "attributeRank",
        "wordPosition",
        "exactness",
    ]
    assert [rule.name for rule in configured_rules(["exactness", "exactness"], "last")] == [
        "words",
        "exactness",
    ]
