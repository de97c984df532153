"""The fusion of a hybrid search's keyword and semantic lists (search.md §7.6 step 5), on score groups."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from gateway.search.hybrid import compare, fuse, keyword_suffices
from shard.query.semantic import similarities


@dataclass(frozen=True)
class Hit:
    seq: int
    groups: tuple[Any, ...]
    score: float = 0.0


def test_weighted_scores_decide_then_the_sort_value() -> None:
    assert compare([0.9], 0.5, [0.8], 0.5) < 0
    assert compare([0.6], 0.2, [0.5], 0.8) > 0  # 0.12 against 0.4
    assert compare([0.5, [False, 7]], 0.5, [0.5, [False, 3]], 0.5) < 0  # n:desc, 7 first
    assert compare([0.5, [True, None]], 0.5, [0.5, [True, 3]], 0.5) > 0  # missing values last


def test_a_zero_score_loses_against_a_sort_value_and_more_groups_win() -> None:
    assert compare([0.0], 0.5, [[True, 3]], 0.5) > 0
    assert compare([0.1], 0.5, [[True, 3]], 0.5) < 0
    assert compare([[True, 3]], 0.5, [0.0], 0.5) < 0
    assert compare([0.5, [True, 1], 0.3], 0.5, [0.5, [True, 1]], 0.5) < 0
    assert compare([0.5], 0.5, [0.5], 0.5) == 0


def test_fusion_keeps_each_list_order_ties_to_semantic_and_documents_once() -> None:
    keyword = [Hit(1, (0.9,)), Hit(2, (0.8,)), Hit(3, (0.4,))]
    semantic = [Hit(4, (0.9,)), Hit(2, (0.7,)), Hit(5, (0.1,))]
    assert [hit.seq for hit in fuse(keyword, semantic, 0.5)] == [4, 1, 2, 3, 5]


def test_keyword_hits_suffice_when_they_fill_the_page_scoring_enough() -> None:
    hits = [Hit(1, (), 0.95), Hit(2, (), 0.91)]
    assert keyword_suffices(hits, 0.5, 2)
    assert not keyword_suffices(hits, 0.5, 3)  # the page is not full
    assert not keyword_suffices(hits, 0.6, 2)  # 0.91 * 0.4 < 0.45


def test_similarities_as_the_reference_computes_them() -> None:
    cosines = [1.0, 0.9 / np.sqrt(0.82), 0.0, -1.0]
    assert similarities(cosines, None).tolist() == pytest.approx([1.0, 0.996941864490509, 0.5, 0.0], abs=1e-7)
    shifted = similarities([1.0, 0.0, -1.0], {"mean": 0.7, "sigma": 0.2}).tolist()
    assert shifted == pytest.approx([1.0, 0.10000002384185791, 1.1920928955078125e-07])
