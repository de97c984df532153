"""Language detection and Snowball stemming, for the callers that derive stemmed words."""

from __future__ import annotations

from typing import Any

import Stemmer
import whatlang

from shard.analysis.locales import STEMMER_ALGORITHMS, iso639_3
from shard.analysis.memo import Memo

FALLBACK_LANGUAGE = "eng"
"""The stemming language of text no language is detected in (nor set by ``localizedAttributes`` or
``locales``), documents and queries alike: decided by the text alone, so the stems of a document or a
query do not depend on what else a shard holds (``bm25`` answers the same on any shard count)."""

MIN_CONFIDENCE = 0.5
"""Below this whatlang confuses close languages on short texts; a wrong stemmer does more harm than none."""

DETECTION_SAMPLE = 2000
"""Characters looked at: detection is linear in the text and a field's start tells its language."""


def detect_language(text: str) -> str | None:
    """The text's ISO 639-3 code, when detected confidently and a stemmer exists for it."""
    try:
        info: Any = whatlang.detect(text[:DETECTION_SAMPLE])  # Any: the stub omits Info's attributes
    except ValueError:  # no letters to judge from
        return None
    if not (info.is_reliable or info.confidence >= MIN_CONFIDENCE):
        return None
    language: str = info.lang
    return language if language in STEMMER_ALGORITHMS else None


class Stemmers:
    """One Snowball stemmer and one memo per language, created on first use; one instance per thread."""

    def __init__(self) -> None:
        self._memos: dict[str, Memo | None] = {}

    def stem(self, word: str, language: str) -> str:
        try:
            memo = self._memos[language]
        except KeyError:
            memo = self._memos[language] = self._memo(language)
        return word if memo is None else memo[word]

    @staticmethod
    def _memo(language: str) -> Memo | None:
        algorithm = STEMMER_ALGORITHMS.get(iso639_3(language))
        if algorithm is None:
            return None
        stemmer = Stemmer.Stemmer(algorithm)
        stemmer.maxCacheSize = 0  # the memo already is the cache
        return Memo(stemmer.stemWord)
