"""Each process's own resource figures, labelled with the process (``shard-0``, ``scheduler``...)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import ProcessCollector
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector


class ProcessMetrics(Collector):
    """``sift_process_resident_memory_bytes{process}``, CPU seconds, open fds...: prometheus-client's
    process collector under the ``sift`` namespace, with a ``process`` label so the cluster's processes
    stay apart once the gateway merges them."""

    def __init__(self, process: str) -> None:
        self._process = process
        self._inner = ProcessCollector(namespace="sift", registry=None)

    def collect(self) -> Iterator[Metric]:
        for family in self._inner.collect():
            labelled = Metric(family.name, family.documentation, family.type)
            for sample in family.samples:
                labelled.add_sample(sample.name, {**sample.labels, "process": self._process}, sample.value)
            yield labelled


def lmdb_families(process: str, size: int, used: int) -> Iterator[Metric]:
    """The contract's database sizes (summed over processes) and this process's own."""
    yield GaugeMetricFamily("meilisearch_db_size_bytes", "Meilisearch DB Size In Bytes", value=size)
    yield GaugeMetricFamily("meilisearch_used_db_size_bytes", "Meilisearch Used DB Size In Bytes", value=used)
    own = GaugeMetricFamily("sift_lmdb_size_bytes", "Size of a process's LMDB data file", labels=["process"])
    own.add_metric([process], size)
    yield own
    live = GaugeMetricFamily(
        "sift_lmdb_used_bytes", "Pages of a process's LMDB file holding live data", labels=["process"]
    )
    live.add_metric([process], used)
    yield live
