"""Runtime experimental features: the PATCH merge (core.md §3.11) and the scheduler's durable record."""

from __future__ import annotations

from pathlib import Path

from common.features import FEATURES, FilterFeatures, default_features, merge_features
from scheduler.features import FeatureCatalog
from scheduler.store import SchedulerStore


def test_merge_keeps_omitted_and_null_fields_and_the_contract_order() -> None:
    current = {**default_features(), "metrics": True}
    merged = merge_features(current, {"metrics": None, "network": True, "legacySearch": None})
    assert list(merged) == list(FEATURES)
    assert merged == {**default_features(), "metrics": True, "network": True}
    assert default_features()["legacySearch"] is None


def test_merge_ignores_names_it_does_not_know() -> None:
    """A record written by another version may hold a feature this one dropped."""
    assert merge_features({"gone": True}, {"other": False}) == default_features()


def test_filter_features_travel_as_params() -> None:
    features = FilterFeatures(contains_filter=True, multimodal=False)
    assert FilterFeatures.from_params(features.params()) == features
    assert FilterFeatures.from_params({"containsFilter": True}) == features


def test_the_catalog_survives_reopening_the_store(tmp_path: Path) -> None:
    store = SchedulerStore(tmp_path)
    catalog = FeatureCatalog(store)
    assert catalog.get() == default_features()
    assert catalog.update({"containsFilter": True, "legacySearch": False})["containsFilter"] is True
    store.close()
    reopened = FeatureCatalog(SchedulerStore(tmp_path))
    assert reopened.get() == {**default_features(), "containsFilter": True, "legacySearch": False}
