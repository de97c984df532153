"""The highlighter's shortcuts find exactly what the full token stream finds.

``MatchFinder.texts_that_may_match`` and ``may_match`` screen texts before tokenising
them, and ``matches`` finds words and phrases without the token stream. A screen that wrongly rules
a text out loses a highlight; a shortcut that disagrees with ``analyse`` moves one. Real texts
(every string of the shared datasets' samples) and crafted edge cases are checked against queries
made of their own words.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shard.analysis import AnalysisConfig, Analyzer, TokenKind
from shard.highlight import WordTable
from shard.highlight.matching import MatchFinder, _needle_pattern
from tests.support.cluster import REPO_ROOT

DATASETS = REPO_ROOT.parent / "shared" / "datasets"
CRAFTED = [
    "Un CAFÉ, un café. Le ﬁnal: ﬁn.",
    "Version 3.5 and 3,5 are 3. 5 apart; a.b is one run",
    "New York. York new! new york? NEW-YORK",
    "l'été de Jean-Luc — Ça va…",
    "東京 is Tokyo, 東京タワー",
    "under_score camelCase O'Neil don't",
    "ΣΊΣΥΦΟΣ σίσυφος straße STRASSE",
    "   leading and trailing   ",
    "",
]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _texts() -> list[str]:
    movies = json.loads((DATASETS / "movies-1688" / "movies.json").read_bytes())
    texts = [text for movie in movies[:30] for text in _strings(movie)]
    with open(DATASETS / "cranfield" / "corpus.jsonl", "rb") as lines:
        texts += [json.loads(line)["text"] for line, _ in zip(lines, range(15), strict=False)]
    with open(DATASETS / "cities" / "cities.ndjson", "rb") as lines:
        texts += [
            json.loads(line)["name"] for line, _ in zip(lines, range(2000), strict=False) if _ % 20 == 0
        ]
    return texts + CRAFTED


TEXTS = _texts()
ANALYZERS = {
    "default": Analyzer(AnalysisConfig()),
    "stop words": Analyzer(AnalysisConfig.from_settings({"stopWords": ["the", "of", "a"]})),
    "custom tokens": Analyzer(AnalysisConfig.from_settings({"dictionary": ["j.r.r.", "new york"]})),
}


def _queries(analyzer: Analyzer, text: str, rng: random.Random) -> list[WordTable]:
    """Matchers built from the text's own words (so they match), and one from another text's."""
    words = [token.normalized for token in analyzer.tokens(text) if token.kind is TokenKind.WORD]
    other = [token.normalized for token in analyzer.tokens(rng.choice(TEXTS)) if token.kind is TokenKind.WORD]
    tables = [WordTable({word: (0, len(word)) for word in other[:3]})]
    if not words:
        return tables
    picked = rng.sample(words, min(3, len(words)))
    tables.append(WordTable({word: (at, len(word)) for at, word in enumerate(picked)}))
    tables.append(WordTable(prefixes=[(word[: rng.randint(1, len(word))], 0) for word in picked[:2]]))
    tables.append(WordTable({picked[0]: (0, 1)}))  # a typo variant highlights as far as the user typed
    start = rng.randrange(len(words))
    phrase = tuple(words[start : start + rng.randint(2, 3)])
    if len(phrase) > 1:
        gapped = (phrase[0], None, *phrase[2:]) if len(phrase) > 2 else phrase
        tables.append(WordTable({phrase[-1]: (1, len(phrase[-1]))}, phrases=[(0, phrase), (2, gapped)]))
        tables.append(WordTable(phrases=[(0, (None, *phrase[1:]))]))
    return tables


@pytest.mark.parametrize("name", sorted(ANALYZERS))
def test_shortcuts_agree_with_the_token_stream(name: str) -> None:
    analyzer = ANALYZERS[name]
    rng = random.Random(7)
    checked = found = 0
    for at, text in enumerate(TEXTS):
        array = TEXTS[at : at + 3]  # the text among its neighbours, as in an array of strings
        for table in _queries(analyzer, text, rng):
            finder = MatchFinder(table, analyzer)
            expected = finder.analyse(text, ()).matches
            assert finder.matches(text, ()) == expected, (text, table)
            if expected:
                assert finder.may_match(text, ()), (text, table)
                if text.isascii():
                    assert finder.texts_that_may_match([text]) == [0], (text, table)
            screened = [item for item in array if item.isascii()]  # as a hit's screen takes them
            holding = {index for index, item in enumerate(screened) if finder.analyse(item, ()).matches}
            assert holding <= set(finder.texts_that_may_match(screened)), (screened, table)
            checked += 1
            found += bool(expected)
    assert found > checked // 2  # the queries mostly match: the comparison is not between empty lists


def test_a_needle_inside_a_longer_word_is_ruled_out_at_word_edges() -> None:
    finder = MatchFinder(WordTable({"war": (0, 3)}), ANALYZERS["default"])
    assert finder.texts_that_may_match(["An award-winning swarm toward warmth"]) == []
    assert finder.texts_that_may_match(["Star Wars: the war"]) == [0]
    prefixed = MatchFinder(WordTable(prefixes=[("war", 0)]), ANALYZERS["default"])
    assert prefixed.texts_that_may_match(["warmth", "swarm"]) == [0]


_NEEDLE = st.text(alphabet="ab0", min_size=1, max_size=4)


@given(
    words=st.lists(_NEEDLE, max_size=6),
    prefixes=st.lists(_NEEDLE, max_size=3),
    text=st.text(alphabet="ab0 -\n", max_size=30),
    bounded=st.booleans(),
)
def test_the_needle_trie_finds_what_its_needles_find_one_by_one(
    words: list[str], prefixes: list[str], text: str, bounded: bool
) -> None:
    """The merged pattern (shared prefixes, edge checks after the first character) starts a match
    where some needle, tried alone with plain edge checks, does."""
    before, after = ("(?<![a-z0-9])", "(?![a-z0-9])") if bounded else ("", "")
    alone = [re.compile(f"{before}{word}{after}") for word in words]
    alone += [re.compile(f"{before}{prefix}") for prefix in prefixes]
    expected = {at for at in range(len(text) + 1) if any(pattern.match(text, at) for pattern in alone)}
    pattern = _needle_pattern(words, prefixes, bounded)
    if pattern is None:
        assert not expected
        return
    assert {at for at in range(len(text) + 1) if pattern.match(text, at)} == expected
