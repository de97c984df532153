"""separatorTokens, nonSeparatorTokens and dictionary (search.md §6.8)."""

from __future__ import annotations

from shard.analysis import AnalysisConfig, Analyzer, TokenKind


def _analyzer(**settings: list[str]) -> Analyzer:
    return Analyzer(AnalysisConfig.from_settings(settings))


def test_non_separator_tokens_join_words() -> None:
    analyzer = _analyzer(nonSeparatorTokens=["#", "@", "-"])
    assert analyzer.index_text("#hashtag @user e-mail 2024-01-02 - x")[0] == [
        "#hashtag", "@user", "e-mail", "2024-01-02", "-", "x",
    ]  # fmt: skip


def test_multi_character_non_separator() -> None:
    analyzer = _analyzer(nonSeparatorTokens=["--"])
    assert analyzer.index_text("a--b c-d")[0] == ["a--b", "c", "d"]


def test_non_separator_dot_is_no_longer_a_hard_separator() -> None:
    assert _analyzer(nonSeparatorTokens=["."]).index_text("end. next") == (["end.", "next"], [0, 1], 2)


def test_separator_tokens() -> None:
    analyzer = _analyzer(separatorTokens=["|", "&hellip;", "x"])
    assert analyzer.index_text("left|right wait&hellip;what box")[0] == [
        "left",
        "right",
        "wait",
        "what",
        "bo",
    ]
    kinds = [t.kind for t in analyzer.tokens("a&hellip;b")]
    assert kinds == [TokenKind.WORD, TokenKind.HARD_SEPARATOR, TokenKind.WORD]


def test_dictionary_entries_are_single_tokens() -> None:
    analyzer = _analyzer(dictionary=["J. R. R.", "C++"], nonSeparatorTokens=["+"])
    words, positions, _ = analyzer.index_text("J. R. R. Tolkien writes c++ code")
    assert words == ["j. r. r.", "tolkien", "writes", "c++", "code"]
    assert positions == [0, 1, 2, 3, 4]
    assert analyzer.normalize("C++") == ["c++"]


def test_dictionary_wins_over_separators() -> None:
    analyzer = _analyzer(dictionary=["a|b"], separatorTokens=["|"])
    assert analyzer.index_text("a|b c|d")[0] == ["a|b", "c", "d"]


def test_default_separator_in_non_separators_and_separators_stays_a_word_char() -> None:
    assert _analyzer(separatorTokens=["#"], nonSeparatorTokens=["#"]).index_text("#tag")[0] == ["#tag"]
