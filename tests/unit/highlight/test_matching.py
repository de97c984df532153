"""Which spans of a text match the query: whole words, prefixes, phrases, stop words (search.md §7.8)."""

from __future__ import annotations

from shard.analysis import AnalysisConfig, Analyzer
from shard.highlight import NO_MATCH, FormatOptions, HitFormatter, WordTable
from tests.unit.highlight.conftest import Format

HIGHLIGHT = {"attributes_to_highlight": ["*"]}


def test_whole_word_keeps_original_spelling(fmt: Format) -> None:
    matcher = WordTable({"cafe": (0, 4)})
    formatted, _ = fmt({"t": "Un CAFÉ, un café."}, matcher, **HIGHLIGHT)
    assert formatted == {"t": "Un <em>CAFÉ</em>, un <em>café</em>."}


def test_prefix_highlights_only_the_prefix(fmt: Format) -> None:
    matcher = WordTable(prefixes=[("lov", 0)])
    formatted, _ = fmt({"t": "A lovely love story"}, matcher, **HIGHLIGHT)
    assert formatted == {"t": "A <em>lov</em>ely <em>lov</em>e story"}


def test_prefix_of_an_expanding_ligature_covers_the_original_character(fmt: Format) -> None:
    matcher = WordTable(prefixes=[("fi", 0)])
    formatted, _ = fmt({"t": "ﬁnal"}, matcher, **HIGHLIGHT)
    assert formatted == {"t": "<em>ﬁ</em>nal"}


def test_word_table_prefers_the_explicit_word_entry() -> None:
    matcher = WordTable({"lovely": (1, 6)}, prefixes=[("lov", 0)])
    assert matcher.match("lovely") == (1, 6)
    assert matcher.match("lover") == (0, 3)
    assert matcher.match("hate") is None
    assert NO_MATCH.match("anything") is None
    assert NO_MATCH.phrases == ()


def test_phrase_is_one_span_from_first_to_last_word(fmt: Format) -> None:
    matcher = WordTable(phrases=[(0, ("new", "york"))])
    formatted, positions = fmt(
        {"t": "New  York, new jersey, York new"}, matcher, show_matches_position=True, **HIGHLIGHT
    )
    assert formatted == {"t": "<em>New  York</em>, new jersey, York new"}
    assert positions == {"t": [{"start": 0, "length": 9}]}


def test_phrase_wildcard_stands_for_any_word(fmt: Format) -> None:
    matcher = WordTable(phrases=[(0, ("lord", None, "rings"))])
    formatted, _ = fmt({"t": "The Lord of the Rings, the Lord of Rings"}, matcher, **HIGHLIGHT)
    assert formatted == {"t": "The Lord of the Rings, the <em>Lord of Rings</em>"}


def test_phrase_does_not_cross_a_sentence_end(fmt: Format) -> None:
    matcher = WordTable(phrases=[(0, ("end", "start"))])
    formatted, _ = fmt({"t": "the end. Start again, end start"}, matcher, **HIGHLIGHT)
    assert formatted == {"t": "the end. Start again, <em>end start</em>"}


def test_words_inside_a_phrase_match_are_not_highlighted_twice(fmt: Format) -> None:
    matcher = WordTable({"york": (1, 4)}, phrases=[(0, ("new", "york"))])
    formatted, positions = fmt({"t": "new york york"}, matcher, show_matches_position=True, **HIGHLIGHT)
    assert formatted == {"t": "<em>new york</em> <em>york</em>"}
    assert positions == {"t": [{"start": 0, "length": 8}, {"start": 9, "length": 4}]}


def test_stop_words_are_highlighted_when_the_matcher_matches_them() -> None:
    analyzer = Analyzer(AnalysisConfig.from_settings({"stopWords": ["the"]}))
    matcher = WordTable({"the": (0, 3)})
    formatted, _ = HitFormatter(FormatOptions(attributes_to_highlight=["t"]), matcher, analyzer).format(
        {"t": "The end"}
    )
    assert formatted == {"t": "<em>The</em> end"}


def test_tags_may_be_anything_and_text_is_not_escaped(fmt: Format) -> None:
    matcher = WordTable({"b": (0, 1)})
    formatted, _ = fmt({"t": "<a> & b"}, matcher, highlight_pre_tag="", highlight_post_tag="|", **HIGHLIGHT)
    assert formatted == {"t": "<a> & b|"}


def test_no_match_leaves_highlighted_text_unchanged(fmt: Format) -> None:
    formatted, _ = fmt({"t": "Nothing to see", "n": 3}, NO_MATCH, **HIGHLIGHT)
    assert formatted == {"t": "Nothing to see", "n": "3"}
