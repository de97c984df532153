"""Space-less runs starting with ``ー`` segment the same whatever the process segmented before.

ICU loads its dictionary break engines lazily and picks one by a run's first character; ``ー`` (script
Common) found no engine until a Chinese/Japanese run had loaded it, so the first ``ー𠀋yc`` of a process
gave ``ー𠀋`` and every later one ``ー``, ``𠀋``: ``index_text`` and ``tokens`` disagreed. The analyser
now loads the engines up front. The cold cases run in a fresh interpreter, where nothing is loaded yet.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from shard.analysis import Analyzer, TokenKind

CASES = [
    ("ー𠀋yc", ["ー", "𠀋", "yc"]),  # U+30FC + CJK Ext-B U+2000B + ASCII: the hypothesis find
    ("ー𠀋", ["ー", "𠀋"]),
    ("yc ー𠀋", ["yc", "ー", "𠀋"]),
    ("ー\U00020bb7ab", ["ー", "\U00020bb7", "ab"]),  # Ext-B 𠮷
    ("ー\U00030000 1", ["ー", "\U00030000", "1"]),  # Ext-G
    ("\U0002a6b2ーyc", ["\U0002a6b2", "ー", "yc"]),  # Ext-B, mark after the ideograph
    ("ｰ東京yc", ["ー", "東京", "yc"]),  # halfwidth U+FF70, folded to U+30FC
    ("ー𠀋ー𠀋yc", ["ー", "𠀋", "ー", "𠀋", "yc"]),
    ("ーラーメン", ["ーラーメン"]),  # a katakana word keeps its marks
]

_COLD = """
import json, sys
from shard.analysis import AnalysisConfig, Analyzer, TokenKind
analyzer = Analyzer(AnalysisConfig())
text, tokens_first = sys.argv[1], sys.argv[2] == "1"
def from_tokens():
    return [t.normalized for t in analyzer.tokens(text) if t.kind is TokenKind.WORD]
first = from_tokens() if tokens_first else analyzer.index_text(text)[0]
second = analyzer.index_text(text)[0] if tokens_first else from_tokens()
print(json.dumps([first, second]))
"""


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_index_text_agrees_with_tokens(analyzer: Analyzer, text: str, expected: list[str]) -> None:
    words, positions, length = analyzer.index_text(text)
    assert words == expected
    assert words == [t.normalized for t in analyzer.tokens(text) if t.kind is TokenKind.WORD]
    assert positions == list(range(len(expected))) and length == len(expected)


@pytest.mark.parametrize(
    ("text", "tokens_first"), [("ー𠀋yc", False), ("ｰ東京yc", True), ("ー\U00020bb7ab", False)]
)
def test_first_segmentation_of_a_process(text: str, tokens_first: bool) -> None:
    """In a fresh process, the very first text already gets the steady-state words, on either path."""
    run = subprocess.run(
        [sys.executable, "-c", _COLD, text, "1" if tokens_first else "0"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    expected = dict(CASES)[text]
    assert json.loads(run.stdout) == [expected, expected]
