"""Properties: the fast indexing path agrees with the full token stream, whatever the text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shard.analysis import MAX_WORD_BYTES, AnalysisConfig, Analyzer, TokenKind, fold

ANALYZERS = [
    Analyzer(AnalysisConfig()),
    Analyzer(AnalysisConfig.from_settings({"stopWords": ["the", "a", "1", "é"]})),
    Analyzer(AnalysisConfig.from_settings({"nonSeparatorTokens": ["#", ".", "-"], "stopWords": ["a"]})),
    Analyzer(
        AnalysisConfig.from_settings(
            {"dictionary": ["C++", "a. b"], "separatorTokens": ["|", "xy"], "nonSeparatorTokens": ["--", "+"]}
        )
    ),
]

# Characters that exercise the interesting rules: digits around . and , ; hard and soft separators;
# accents and combining marks; space-less scripts; astral letters and emoji; custom tokens.
ALPHABET = st.sampled_from(
    [
        *"abcxyABC019 .,;!?-#+|'\n\t…。、，！",  # noqa: RUF001
        *["é", "\u0301", "\u00ad", "ß", "ж", "ก", "\u0e48", "東", "京", "に", "ー", "한"],
        *["\U0001d400", "😀", "𠀋", "\u0661", "①"],  # mathematical bold A, Arabic-Indic one
    ]
)
TEXTS = st.one_of(st.text(), st.text(alphabet=ALPHABET, max_size=60))


def _indexable(analyzer: Analyzer, text: str) -> tuple[list[str], list[int]]:
    tokens = [t for t in analyzer.tokens(text) if t.kind is TokenKind.WORD]
    kept = [
        t for t in tokens if t.normalized and not t.stop_word and len(t.normalized.encode()) <= MAX_WORD_BYTES
    ]
    return [t.normalized for t in kept], [t.position for t in kept]


@pytest.mark.parametrize("analyzer", ANALYZERS, ids=["default", "stop-words", "non-separators", "custom"])
@settings(max_examples=300, deadline=None)
@given(text=TEXTS)
def test_tokens_agree_with_index_text(analyzer: Analyzer, text: str) -> None:
    words, positions, length = analyzer.index_text(text)
    assert (words, positions) == _indexable(analyzer, text)
    tokens = analyzer.tokens(text)
    word_positions = [t.position for t in tokens if t.kind is TokenKind.WORD]
    assert length == (word_positions[-1] + 1 if word_positions else 0)
    assert word_positions == sorted(set(word_positions))
    assert "".join(t.text for t in tokens) == text
    assert all(text[t.start : t.end] == t.text for t in tokens)


@settings(max_examples=500, deadline=None)
@given(word=st.one_of(st.text(), st.text(alphabet=ALPHABET)))
def test_fold_is_idempotent(word: str) -> None:
    assert fold(fold(word)) == fold(word)
