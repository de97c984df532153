"""``common/timing.py``: step durations and their human form (``performanceDetails``)."""

from __future__ import annotations

import time

import pytest

from common.timing import Steps, human_duration


@pytest.mark.parametrize(
    ("nanoseconds", "text"),
    [
        (0, "0ns"),
        (999, "999ns"),
        (1_000, "1.00µs"),
        (12_345, "12.35µs"),
        (999_994, "999.99µs"),
        (999_996, "1.00ms"),
        (999_996_000, "1.00s"),
        (1_000_000, "1.00ms"),
        (3_214_000, "3.21ms"),
        (1_000_000_000, "1.00s"),
        (61_500_000_000, "61.50s"),
    ],
)
def test_human_duration_picks_the_readable_unit(nanoseconds: int, text: str) -> None:
    assert human_duration(nanoseconds) == text


def test_laps_measure_consecutive_steps_and_children_share_the_map() -> None:
    steps = Steps()
    time.sleep(0.002)
    steps.lap("first")
    child = steps.child("search")
    time.sleep(0.001)
    child.lap("inner")
    child.include("shard 1", {"rank": 5, "format": 7})
    child.add("inner", 10)
    steps.lap("search")
    durations = steps.durations
    shard = ["search > shard 1 > rank", "search > shard 1 > format"]
    assert list(durations) == ["first", "search > inner", *shard, "search"]
    assert durations["first"] >= 2_000_000
    assert durations["search > inner"] >= 1_000_010
    assert durations["search"] >= durations["search > inner"] - 10
    assert (durations["search > shard 1 > rank"], durations["search > shard 1 > format"]) == (5, 7)
    assert steps.details()["search > shard 1 > rank"] == "5ns"
