"""Merging the processes' metric families (``common/metrics/families.py``) into one exposition."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.parser import text_string_to_metric_families

from common.metrics.families import encode, merge, render


def _process(documents: int, shard: str) -> CollectorRegistry:
    registry = CollectorRegistry()
    Gauge("docs", "documents", ["index"], registry=registry).labels("books").set(documents)
    Counter("searches", "searches", ["shard"], registry=registry).labels(shard).inc(documents)
    return registry


def test_equal_samples_add_up_and_labelled_ones_stay_apart() -> None:
    text = render(merge([encode(_process(3, "0")), encode(_process(4, "1"))])).decode()
    families = {family.name: family for family in text_string_to_metric_families(text)}
    assert [(s.labels, s.value) for s in families["docs"].samples] == [({"index": "books"}, 7.0)]
    searches = {s.labels["shard"]: s.value for s in families["searches"].samples}
    assert searches == {"0": 3.0, "1": 4.0}
    assert text.count("# TYPE searches_total counter") == 1
    assert "_created" not in text
