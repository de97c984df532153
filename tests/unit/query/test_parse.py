"""Query parsing (search.md §7.1): terms, prefix, phrases, negations, stop words, the 10-term rule."""

from __future__ import annotations

from shard.analysis import AnalysisConfig, Analyzer
from shard.query.parse import MAX_TERMS, parse_query

ANALYZER = Analyzer(AnalysisConfig.from_settings({"stopWords": ["the", "of"]}))


def terms(q: str) -> list[tuple[tuple[str | None, ...], bool, bool]]:
    return [(term.words, term.phrase, term.prefix) for term in parse_query(ANALYZER, q).terms]


def test_words_become_terms_and_the_last_one_is_a_prefix() -> None:
    assert terms("Hello World") == [(("hello",), False, False), (("world",), False, True)]


def test_a_trailing_separator_turns_prefix_matching_off() -> None:
    assert terms("hello world ") == [(("hello",), False, False), (("world",), False, False)]


def test_blank_queries_are_placeholders() -> None:
    for q in (None, "", "   "):
        assert parse_query(ANALYZER, q).placeholder


def test_stop_words_are_dropped_except_as_the_last_token() -> None:
    assert terms("lord of the rings") == [(("lord",), False, False), (("rings",), False, True)]
    assert terms("lord of the") == [(("lord",), False, False), (("the",), False, True)]
    assert parse_query(ANALYZER, "lord of the rings").stop_words == ["of", "the"]


def test_quotes_make_phrases_with_stop_words_as_wildcards() -> None:
    assert terms('"lord of the rings" movie') == [
        (("lord", None, None, "rings"), True, False),
        (("movie",), False, True),
    ]


def test_an_unclosed_quote_runs_to_the_end() -> None:
    assert terms('big "red apple') == [(("big",), False, False), (("red", "apple"), True, False)]


def test_a_hard_separator_splits_a_phrase() -> None:
    assert terms('"red apple. green pear"') == [
        (("red", "apple"), True, False),
        (("green", "pear"), True, False),
    ]


def test_negations_need_a_leading_dash_after_whitespace() -> None:
    parsed = parse_query(ANALYZER, 'apple -pear -"green tea" e-mail')
    assert parsed.negated_words == ["pear"]
    assert parsed.negated_phrases == [("green", "tea")]
    assert [term.words for term in parsed.terms] == [("apple",), ("e",), ("mail",)]


def test_only_negations_leave_a_placeholder_with_exclusions() -> None:
    parsed = parse_query(ANALYZER, "-pear")
    assert parsed.placeholder and parsed.negated_words == ["pear"]


def test_only_the_first_ten_terms_count_and_negations_are_not_terms() -> None:
    words = [f"w{number}" for number in range(12)]
    parsed = parse_query(ANALYZER, " ".join(["-nope", *words]))
    assert [term.word for term in parsed.terms] == words[:MAX_TERMS]
    assert parsed.negated_words == ["nope"]


def test_term_positions_count_the_dropped_stop_words() -> None:
    parsed = parse_query(ANALYZER, "lord of the rings")
    assert [term.position for term in parsed.terms] == [0, 3]
