"""Tokenizing and normalising space-separated text: words, positions, stop words, numbers, limits."""

from __future__ import annotations

from shard.analysis import AnalysisConfig, Analyzer, TokenKind, fold


def test_english_sentence_positions_with_hard_separator_and_stop_words(english: Analyzer) -> None:
    words, positions, length = english.index_text("The quick brown fox. It jumps over the lazy dog!")
    assert words == ["quick", "brown", "fox", "it", "jumps", "over", "lazy", "dog"]
    # "The" (0) and "the" (14) are stop words: not returned, but they keep their positions.
    assert positions == [1, 2, 3, 11, 12, 13, 15, 16]
    assert length == 17


def test_trailing_stop_word_still_counts_in_length(english: Analyzer) -> None:
    assert english.index_text("end of") == (["end"], [0], 2)


def test_soft_and_hard_separators(analyzer: Analyzer) -> None:
    # As the reference engine places them: ", " and "; " are hard, " - " and a line break soft.
    text = "one, two; three - four\nfive ... six"
    assert analyzer.index_text(text) == (
        ["one", "two", "three", "four", "five", "six"],
        [0, 8, 16, 17, 18, 26],
        27,
    )


def test_dot_followed_by_a_word_is_soft(analyzer: Analyzer) -> None:
    assert analyzer.index_text("node.js e.g. next") == (
        ["node", "js", "e", "g", "next"],
        [0, 1, 2, 3, 11],
        12,
    )


def test_dot_and_comma_are_hard_only_before_a_space(analyzer: Analyzer) -> None:
    # The reference engine's separators are ". " and ", ": "a,b", ",\n" and a quote after them are soft.
    assert analyzer.index_text('a,b ,c d,\ne.\nf,"g" h, i')[1] == [0, 1, 2, 3, 4, 5, 6, 7, 15]


def test_ellipsis_and_line_breaks_are_soft(analyzer: Analyzer) -> None:
    assert analyzer.index_text("one… two\r\nthree\u2028four ‼ five ! six、seven")[1] == [
        0,
        1,
        2,
        3,
        4,
        12,
        20,
    ]


def test_french_diacritics_and_apostrophe(analyzer: Analyzer) -> None:
    assert analyzer.index_text("Élève à l'école")[0] == ["eleve", "a", "l", "ecole"]
    # ß stays a letter of its own, as on the reference engine (Straße is not strasse), and so do ø, ł,
    # þ and ħ, which have no decomposition; æ, œ, đ, ð and the dotless i are spelled out as it spells them.
    assert analyzer.normalize("CAFÉ naïve Straße STRAẞE Ærø") == ["cafe", "naive", "straße", "straße", "aerø"]
    assert analyzer.normalize("Łódź Þór Ħamrun Œuvre Đakovo Ðorð Diyarbak\u0131r") == [
        "łodz", "þor", "ħamrun", "oeuvre", "dakovo", "dord", "diyarbakir"
    ]  # fmt: skip


def test_marks_latin_shares_with_thai_stay_in_their_word(analyzer: Analyzer) -> None:
    # U+0331 (macron below) and U+0303 (tilde) are also Thai marks: they must not start a space-less run.
    assert analyzer.index_text("H\u0331allamish Kha\u0304\u0303dba\u0304ri")[0] == ["hallamish", "khadbari"]


def test_german_compound_and_camel_case_stay_whole(analyzer: Analyzer) -> None:
    assert analyzer.index_text("Donaudampfschifffahrt iPhone")[0] == ["donaudampfschifffahrt", "iphone"]


def test_numbers(analyzer: Analyzer) -> None:
    words, positions, _ = analyzer.index_text("pi is 3.14, about 1,000 or 42; date 2024-01-02 v1.2")
    assert words == ["pi", "is", "3.14", "about", "1,000", "or", "42", "date", "2024", "01", "02", "v1.2"]
    assert positions == [0, 1, 2, 10, 11, 12, 13, 21, 22, 23, 24, 25]  # ", " and "; " are hard


def test_default_separators_include_ascii_and_unicode_punctuation(analyzer: Analyzer) -> None:
    text = "a_b c/d e@f g#h «i» j—k l’m n+o"  # noqa: RUF001
    assert analyzer.index_text(text)[0] == list("abcdefghijklmno")


def test_devanagari_combining_marks_stay_in_the_word(analyzer: Analyzer) -> None:
    assert analyzer.index_text("हिन्दी भाषा")[0] == ["हिन्दी", "भाषा"]


def test_long_words_are_dropped_but_keep_their_position(analyzer: Analyzer) -> None:
    kept = "a" * 250
    assert analyzer.index_text(f"x {'b' * 251} {kept} {'ж' * 126} y") == (["x", kept, "y"], [0, 2, 4], 5)


def test_position_cap(analyzer: Analyzer) -> None:
    words, positions, length = analyzer.index_text("w " * 70_000)
    assert len(words) == 65_536 and positions[-1] == 65_535 and length == 65_536
    sentences, positions, length = analyzer.index_text("w. " * 10_000)
    assert len(sentences) == 8192 and positions[-1] == 65_528 and length == 65_529
    token_words = [t for t in analyzer.tokens("w. " * 10_000) if t.kind is TokenKind.WORD]
    assert len(token_words) == 8192 and token_words[-1].position == 65_528


def test_position_cap_on_the_general_path() -> None:
    analyzer = Analyzer(AnalysisConfig.from_settings({"dictionary": ["C++"]}))
    words, positions, length = analyzer.index_text("C++ " + "w " * 70_000)
    assert words[0] == "c++" and len(words) == 65_536 and positions[-1] == 65_535 and length == 65_536


def test_tokens_keep_offsets_kinds_and_stop_word_flags(english: Analyzer) -> None:
    tokens = english.tokens("The Café. ok")
    assert [(t.kind, t.text, t.normalized, t.start, t.end, t.position, t.stop_word) for t in tokens] == [
        (TokenKind.WORD, "The", "the", 0, 3, 0, True),
        (TokenKind.SOFT_SEPARATOR, " ", " ", 3, 4, 0, False),
        (TokenKind.WORD, "Café", "cafe", 4, 8, 1, False),
        (TokenKind.HARD_SEPARATOR, ". ", ". ", 8, 10, 1, False),
        (TokenKind.WORD, "ok", "ok", 10, 12, 9, False),
    ]
    assert english.tokens("end.")[-1].kind is TokenKind.HARD_SEPARATOR


def test_normalize_keeps_stop_words(english: Analyzer) -> None:
    assert english.normalize("The Lord of the Rings") == ["the", "lord", "of", "the", "rings"]


def test_empty_and_separator_only_text(analyzer: Analyzer) -> None:
    assert analyzer.index_text("") == ([], [], 0)
    assert analyzer.index_text(" ,. !") == ([], [], 0)
    assert [t.kind for t in analyzer.tokens(" ,. !")] == [TokenKind.HARD_SEPARATOR]


def test_fold() -> None:
    assert fold("Élève") == "eleve"
    assert fold("ΣΟΦΟΣ") == "σοφοσ"
    assert fold("ﬁne") == "fine"
    assert fold("İstanbul") == "istanbul"
    assert fold("한국어") == "한국어"  # recomposed Hangul
    assert fold("が") == "が"  # Japanese voicing mark is meaning, not decoration
