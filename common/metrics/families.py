"""A registry's metric families as JSON, and the cluster's exposition from every process's families.

Each process collects its own registry when the gateway asks (``Operations.Metrics``), so values
computed at collection (LMDB sizes, documents per index, RSS) are current. The gateway merges the
families by name; samples with the same name and labels add up, so a figure every shard reports for
itself without a label (``meilisearch_db_size_bytes``, ``meilisearch_index_docs_count{index}``)
becomes the cluster's total, while per-process figures carry a ``shard`` or ``process`` label.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, disable_created_metrics, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

disable_created_metrics()  # no ``*_created`` samples: the reference has none, and dashboards need none

Encoded = list[Any]
"""``[name, type, help, [[sample name, {label: value}, value], ...]]``"""


def encode(registry: CollectorRegistry) -> list[Encoded]:
    return [
        [
            family.name,
            family.type,
            family.documentation,
            [[s.name, s.labels, s.value] for s in family.samples],
        ]
        for family in registry.collect()
    ]


def merge(processes: Iterable[Sequence[Encoded]]) -> list[Metric]:
    """One family per name, sorted by name; samples in first-seen order, equal ones summed."""
    families: dict[str, Metric] = {}
    values: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]] = {}
    for encoded in processes:
        for name, kind, documentation, samples in encoded:
            if name not in families:
                families[name] = Metric(name, documentation, kind)
                values[name] = {}
            summed = values[name]
            for sample_name, labels, value in samples:
                key = (sample_name, tuple(labels.items()))
                summed[key] = summed.get(key, 0.0) + value
    for name, family in families.items():
        for (sample_name, labels), value in values[name].items():
            family.add_sample(sample_name, dict(labels), value)
    return [families[name] for name in sorted(families)]


class _Merged(Collector):
    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self._families)


def render(families: list[Metric]) -> bytes:
    """The text exposition format (``text/plain; version=0.0.4``)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Merged(families))
    return generate_latest(registry)
