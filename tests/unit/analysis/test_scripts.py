"""Space-less scripts (ICU dictionary segmentation), Korean and mixed scripts."""

from __future__ import annotations

from shard.analysis import Analyzer, TokenKind


def test_chinese(analyzer: Analyzer) -> None:
    assert analyzer.index_text("我来到北京清华大学")[0] == ["我", "来到", "北京", "清华大学"]


def test_chinese_punctuation(analyzer: Analyzer) -> None:
    assert analyzer.index_text("我爱北京，中国。你好！", ("zh",)) == (  # noqa: RUF001
        ["我", "爱", "北京", "中国", "你好"],
        [0, 1, 2, 3, 11],
        12,
    )


def test_japanese(analyzer: Analyzer) -> None:
    words, positions, length = analyzer.index_text("東京都に住んでいます", ("jpn",))
    assert words[:3] == ["東京", "都", "に"]
    assert "".join(words) == "東京都に住んでいます"
    assert positions == list(range(len(words))) and length == len(words)


def test_japanese_long_vowel_mark_stays_in_katakana_word(analyzer: Analyzer) -> None:
    assert analyzer.index_text("コーヒー・ケーキ")[0] == ["コーヒー", "ケーキ"]


def test_thai(analyzer: Analyzer) -> None:
    assert analyzer.index_text("ภาษาไทยง่ายนิดเดียว", ("th",))[0] == ["ภาษา", "ไทย", "ง่าย", "นิด", "เดียว"]


def test_korean_is_split_on_spaces_only(analyzer: Analyzer) -> None:
    assert analyzer.index_text("한국어를 배우고 있어요") == (["한국어를", "배우고", "있어요"], [0, 1, 2], 3)


def test_mixed_scripts(analyzer: Analyzer) -> None:
    tokens = analyzer.tokens("Hello 世界 สวัสดี")
    assert [(t.normalized, t.position, t.start, t.end) for t in tokens if t.kind is TokenKind.WORD] == [
        ("hello", 0, 0, 5),
        ("世界", 1, 6, 8),
        ("สวัสดี", 2, 9, 15),
    ]
    assert analyzer.index_text("我爱Python和北京")[0] == ["我", "爱", "python", "和", "北京"]


def test_astral_characters_keep_offsets(analyzer: Analyzer) -> None:
    text = "𠀋東京 😀 𝐀𝐁"  # noqa: RUF001
    words = [t for t in analyzer.tokens(text) if t.kind is TokenKind.WORD]
    assert [(t.text, t.normalized) for t in words] == [("𠀋", "𠀋"), ("東京", "東京"), ("𝐀𝐁", "ab")]  # noqa: RUF001
    assert all(text[t.start : t.end] == t.text for t in words)
