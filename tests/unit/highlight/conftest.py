"""A default analyser and a one-call formatter shared by the highlight tests."""

from __future__ import annotations

from typing import Any, Protocol

import pytest

from shard.analysis import AnalysisConfig, Analyzer
from shard.highlight import FormatOptions, HitFormatter, QueryMatcher


class Format(Protocol):
    def __call__(
        self, document: dict[str, Any], matcher: QueryMatcher, **options: Any
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]: ...


@pytest.fixture(scope="session")
def analyzer() -> Analyzer:
    return Analyzer(AnalysisConfig())


@pytest.fixture
def fmt(analyzer: Analyzer) -> Format:
    """``_formatted`` and ``_matchesPosition`` of one document, ``FormatOptions`` given as keywords."""

    def run(
        document: dict[str, Any], matcher: QueryMatcher, **options: Any
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        return HitFormatter(FormatOptions(**options), matcher, analyzer).format(document)

    return run
