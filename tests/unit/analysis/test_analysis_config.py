"""AnalysisConfig.from_settings, analysis keys and localizedAttributes."""

from __future__ import annotations

import pytest

from common.settings.patterns import pattern_matches
from shard.analysis import AnalysisConfig, Analyzer


def test_from_settings_normalises_and_canonicalises() -> None:
    config = AnalysisConfig.from_settings(
        {
            "stopWords": ["The", "Élève", ""],
            "separatorTokens": ["|", "&", "|"],
            "nonSeparatorTokens": None,
            "dictionary": ["C++"],
            "localizedAttributes": [{"attributePatterns": ["title_*"], "locales": ["fr", "fra", "en"]}],
        }
    )
    assert config.stop_words == frozenset({"the", "eleve"})
    assert config.separator_tokens == ("&", "|")
    assert config.non_separator_tokens == ()
    assert config.dictionary == ("C++",)
    assert config.localized_attributes == ((("title_*",), ("fra", "eng")),)


def test_missing_settings_are_defaults() -> None:
    assert AnalysisConfig.from_settings({}) == AnalysisConfig()
    assert AnalysisConfig.from_settings({"localizedAttributes": None}).localized_attributes == ()


def test_analysis_key_ignores_order_but_not_content() -> None:
    one = AnalysisConfig.from_settings({"stopWords": ["a", "b"], "separatorTokens": ["x", "y"]})
    two = AnalysisConfig.from_settings({"stopWords": ["B", "a"], "separatorTokens": ["y", "x"]})
    three = AnalysisConfig.from_settings({"stopWords": ["a"], "separatorTokens": ["y", "x"]})
    assert one.analysis_key() == two.analysis_key()
    assert hash(one.analysis_key()) == hash(two.analysis_key())
    assert one.analysis_key() != three.analysis_key()


@pytest.mark.parametrize(
    ("pattern", "field", "expected"),
    [
        ("*", "anything.nested", True),
        ("title", "title", True),
        ("title", "title.en", True),
        ("title", "titles", False),
        ("title_*", "title_fr", True),
        ("title_*", "subtitle_fr", False),
        ("*_fr", "title_fr", True),
        ("*_fr", "title_en", False),
        ("*desc*", "long_description", True),
        ("*desc*", "summary", False),
    ],
)
def test_pattern_matches(pattern: str, field: str, expected: bool) -> None:
    assert pattern_matches(pattern, field) is expected


def test_locales_for_takes_the_first_matching_rule() -> None:
    analyzer = Analyzer(
        AnalysisConfig.from_settings(
            {
                "localizedAttributes": [
                    {"attributePatterns": ["*_ja"], "locales": ["ja"]},
                    {"attributePatterns": ["overview", "title_*"], "locales": ["en", "fr"]},
                    {"attributePatterns": ["*"], "locales": ["de"]},
                ]
            }
        )
    )
    assert analyzer.locales_for("title_ja") == ("jpn",)
    assert analyzer.locales_for("title_en") == ("eng", "fra")
    assert analyzer.locales_for("overview.short") == ("eng", "fra")
    assert analyzer.locales_for("genre") == ("deu",)
    assert Analyzer(AnalysisConfig()).locales_for("genre") == ()
