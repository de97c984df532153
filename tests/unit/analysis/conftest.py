"""Analysers shared by the analysis tests (building one compiles its patterns)."""

from __future__ import annotations

import pytest

from shard.analysis import AnalysisConfig, Analyzer


@pytest.fixture(scope="session")
def analyzer() -> Analyzer:
    return Analyzer(AnalysisConfig())


@pytest.fixture(scope="session")
def english() -> Analyzer:
    return Analyzer(AnalysisConfig.from_settings({"stopWords": ["the", "a", "of", "The"]}))
