"""The crop window (search.md §7.8): interval choice, growth, markers, lengths."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.analysis import Analyzer
from shard.highlight import NO_MATCH, FormatOptions, HitFormatter, QueryMatcher, WordTable
from tests.unit.highlight.conftest import Format

COUNTING = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
ALPHA_BETA = WordTable({"alpha": (0, 5), "beta": (1, 4)})


def cropped(fmt: Format, text: str, matcher: QueryMatcher, **options: Any) -> str:
    options.setdefault("attributes_to_crop", ["t"])
    options.setdefault("attributes_to_highlight", ["t"])
    formatted, _ = fmt({"t": text}, matcher, **options)
    assert formatted is not None
    return str(formatted["t"])


def test_no_match_keeps_the_first_words(fmt: Format) -> None:
    text = "Natalie risk her future to build a world with the boy she loves."
    assert cropped(fmt, text, NO_MATCH) == "Natalie risk her future to build a world with the…"


def test_no_match_window_starts_at_the_text_start_even_on_a_separator(fmt: Format) -> None:
    text = "(A quick brown fox can not jump 32 feet, right? Brr, it is cold!)"
    assert cropped(fmt, text, NO_MATCH) == "(A quick brown fox can not jump 32 feet, right…"


def test_window_grows_alternately_left_first(fmt: Format) -> None:
    matcher = WordTable({"eleven": (0, 6)})
    assert cropped(fmt, COUNTING, matcher, crop_length=5) == "…nine ten <em>eleven</em> twelve thirteen…"
    assert cropped(fmt, COUNTING, matcher, crop_length=4) == "…nine ten <em>eleven</em> twelve…"


def test_window_clamped_at_an_end_grows_the_other_side(fmt: Format) -> None:
    assert cropped(fmt, COUNTING, WordTable({"one": (0, 3)}), crop_length=3) == "<em>one</em> two three…"
    last = WordTable({"fifteen": (0, 7)})
    assert cropped(fmt, COUNTING, last, crop_length=3) == "…thirteen fourteen <em>fifteen</em>"


def test_window_grows_away_from_a_hard_separator(fmt: Format) -> None:
    text = "Natalie risk her future. Split The World is a book written by Emily Henry. I never read it."
    matcher = WordTable({"split": (0, 5)})
    assert cropped(fmt, text, matcher, crop_length=5) == "…<em>Split</em> The World is a…"


def test_interval_with_more_distinct_terms_wins(fmt: Format) -> None:
    text = "alpha one two three alpha four five six seven eight alpha beta nine ten"
    assert cropped(fmt, text, ALPHA_BETA, crop_length=4) == "…eight <em>alpha</em> <em>beta</em> nine…"


def test_interval_with_smaller_gaps_wins(fmt: Format) -> None:
    text = "alpha one beta two three four five six alpha beta seven"
    assert cropped(fmt, text, ALPHA_BETA, crop_length=3) == "…six <em>alpha</em> <em>beta</em>…"


def test_interval_with_more_pairs_in_query_order_wins(fmt: Format) -> None:
    text = "beta alpha one two three four five alpha beta six"
    assert cropped(fmt, text, ALPHA_BETA, crop_length=3) == "…five <em>alpha</em> <em>beta</em>…"


def test_earliest_interval_wins_ties(fmt: Format) -> None:
    text = "alpha beta one two three four five alpha beta six"
    assert cropped(fmt, text, ALPHA_BETA, crop_length=3) == "<em>alpha</em> <em>beta</em> one…"


def test_gaps_are_capped_at_seven(fmt: Format) -> None:
    matcher = WordTable({"alpha": (0, 5), "beta": (1, 4), "gamma": (2, 5)})
    # first run: gaps 1 and 9 (capped: 1 + 7 = 8); second run: gaps 4 and 5 (9).
    text = " ".join(["alpha", "beta", *["x"] * 8, "gamma", *["y"] * 19, "alpha", *["z"] * 3, "beta"])
    text += " " + " ".join(["z"] * 4 + ["gamma"] + ["z"] * 6)
    expected = "<em>alpha</em> <em>beta</em> x x x x x x x x <em>gamma</em>…"
    assert cropped(fmt, text, matcher, crop_length=11) == expected


def test_the_sliding_window_picks_the_group_in_query_order(fmt: Format) -> None:
    matcher = WordTable({"split": (0, 5), "the": (1, 3), "world": (2, 5)})
    text = "The world split void void void void void void void void void split the world void void"
    expected = "…void void void void void <em>split</em> <em>the</em> <em>world</em> void void"
    assert cropped(fmt, text, matcher) == expected


def test_phrase_longer_than_the_window_is_cut_inside(fmt: Format) -> None:
    matcher = WordTable(phrases=[(0, ("two", "three", "four"))])
    assert cropped(fmt, "one two three four five", matcher, crop_length=2) == "…<em>two three</em>…"


def test_phrase_stays_whole_when_the_window_grows_around_it(fmt: Format) -> None:
    text = "Natalie risk her future. Split The World is a book written by Emily Henry. I never read it."
    matcher = WordTable(phrases=[(0, ("the", "world"))])
    assert cropped(fmt, text, matcher) == "…Split <em>The World</em> is a book written by Emily Henry…"


def test_text_shorter_than_the_window_is_whole_without_markers(fmt: Format) -> None:
    text = "¡Hola amigo! ¿Qué tal?"
    assert cropped(fmt, text, WordTable({"amigo": (0, 5)})) == "¡Hola <em>amigo</em>! ¿Qué tal?"


def test_space_less_script_words_count_as_words(fmt: Format) -> None:
    matcher = WordTable({"住": (0, 1)})
    assert cropped(fmt, "東京都に住んでいます", matcher, crop_length=3) == "…に<em>住</em>んで…"


@pytest.mark.parametrize(
    ("marker", "expected"),
    [("", "nine ten <em>eleven</em> twelve"), ("[...]", "[...]nine ten <em>eleven</em> twelve[...]")],
)
def test_crop_marker(fmt: Format, marker: str, expected: str) -> None:
    matcher = WordTable({"eleven": (0, 6)})
    assert cropped(fmt, COUNTING, matcher, crop_length=4, crop_marker=marker) == expected


def test_crop_length_zero_keeps_the_whole_text(fmt: Format) -> None:
    matcher = WordTable({"eleven": (0, 6)})
    assert cropped(fmt, COUNTING, matcher, crop_length=0) == COUNTING.replace("eleven", "<em>eleven</em>")
    assert cropped(fmt, COUNTING, matcher, attributes_to_crop=["t:0"]) == cropped(
        fmt, COUNTING, matcher, crop_length=0
    )


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("t:2", "…ten <em>eleven</em>…"),
        ("t:+2", "…ten <em>eleven</em>…"),
        ("t:two", "…ten <em>eleven</em> twelve…"),
        ("t:-2", "…ten <em>eleven</em> twelve…"),
        ("t", "…ten <em>eleven</em> twelve…"),
    ],
)
def test_attribute_crop_length_overrides_crop_length(fmt: Format, entry: str, expected: str) -> None:
    matcher = WordTable({"eleven": (0, 6)})
    assert cropped(fmt, COUNTING, matcher, attributes_to_crop=[entry], crop_length=3) == expected


def test_crop_without_highlight_adds_no_tags(fmt: Format) -> None:
    matcher = WordTable({"eleven": (0, 6)})
    text = cropped(fmt, COUNTING, matcher, attributes_to_highlight=None, crop_length=3)
    assert text == "…ten eleven twelve…"


def test_star_crop_overrides_earlier_entries_and_later_entries_override_it(fmt: Format) -> None:
    document = {"a": COUNTING, "b": COUNTING}
    formatted, _ = fmt(document, NO_MATCH, attributes_to_crop=["b:3", "*:2", "a:1"])
    assert formatted == {"a": "one…", "b": "one two…"}


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.sampled_from(["alpha", "beta", "gamma", "x", "yy", "été"]), min_size=0, max_size=40),
    separators=st.lists(st.sampled_from([" ", ", ", ". ", "! ", " - "]), min_size=40, max_size=40),
    length=st.integers(min_value=1, max_value=12),
    lead=st.sampled_from(["", "(", "¿"]),
)
def test_window_is_a_slice_of_the_text_with_the_right_number_of_words(
    analyzer: Analyzer, words: list[str], separators: list[str], length: int, lead: str
) -> None:
    # numbered words: the window's text occurs once, so its place in the text is known
    pieces = [
        f"{word}{at}{separator}" for at, (word, separator) in enumerate(zip(words, separators, strict=False))
    ]
    text = lead + "".join(pieces)
    matcher = WordTable(prefixes=[("alpha", 0), ("beta", 1), ("gamma", 2)])
    options = FormatOptions(attributes_to_crop=["t"], crop_length=length, crop_marker="@")
    formatted, _ = HitFormatter(options, matcher, analyzer).format({"t": text})
    assert formatted is not None
    window = str(formatted["t"])
    inner = window.removeprefix("@").removesuffix("@")
    assert inner in text
    assert window.startswith("@") == (not text.startswith(inner))
    assert window.endswith("@") == (not text.endswith(inner))
    assert len(analyzer.normalize(inner)) == min(length, len(words))
    if len(words) < length:
        assert window == text
