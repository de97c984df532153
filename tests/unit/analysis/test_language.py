"""Language detection and stemming."""

from __future__ import annotations

import pytest

from shard.analysis import Analyzer


@pytest.mark.parametrize(
    ("text", "language"),
    [
        (
            "A young boy discovers that his father was a famous pirate and sets off to find the treasure.",
            "eng",
        ),
        ("Le petit garçon est allé à l'école avec sa mère ce matin pour la première fois.", "fra"),
        ("Der kleine Junge ging heute Morgen zum ersten Mal mit seiner Mutter zur Schule.", "deu"),
        ("", None),
        ("12345 678", None),
        ("東京都に住んでいます。毎日電車で会社に行きます。", None),  # detected, but no Snowball stemmer
    ],
)
def test_detect_language(analyzer: Analyzer, text: str, language: str | None) -> None:
    assert analyzer.detect_language(text) == language


def test_stem(analyzer: Analyzer) -> None:
    assert analyzer.stem("running", "eng") == "run"
    assert analyzer.stem("running", "en") == "run"
    assert analyzer.stem("chevaux", "fra") == "cheval"
    assert analyzer.stem("häuser", "deu") == "haus"
    assert analyzer.stem("running", "jpn") == "running"
    assert analyzer.stem("running", "xyz") == "running"
    assert analyzer.stem("running", "eng") == "run"  # from the memo
