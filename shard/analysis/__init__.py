"""Text analysis: tokenizing and normalising text identically for indexing and for queries."""

from common.locales import LOCALES, iso639_3
from shard.analysis.analyzer import Analyzer
from shard.analysis.config import AnalysisConfig
from shard.analysis.language import FALLBACK_LANGUAGE
from shard.analysis.locales import STEMMER_ALGORITHMS, icu_locale
from shard.analysis.normalize import fold
from shard.analysis.tokens import MAX_POSITION, MAX_WORD_BYTES, Token, TokenKind

__all__ = [
    "FALLBACK_LANGUAGE",
    "LOCALES",
    "MAX_POSITION",
    "MAX_WORD_BYTES",
    "STEMMER_ALGORITHMS",
    "AnalysisConfig",
    "Analyzer",
    "Token",
    "TokenKind",
    "fold",
    "icu_locale",
    "iso639_3",
]
