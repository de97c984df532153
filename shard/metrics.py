"""A shard's Prometheus registry: its search latency, the searches waiting for its search thread, its
batches, and at collection its LMDB sizes and documents per index (``common/metrics``)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from common.metrics.process import ProcessMetrics, lmdb_families
from shard.store import ShardStore

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class ShardMetrics:
    def __init__(self, shard_id: int, store: ShardStore) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        shard = str(shard_id)
        self.search_seconds = Histogram(
            "sift_shard_search_duration_seconds",
            "Time a shard spent on one search call, from receiving it to its reply built (waits included)",
            ["shard"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        ).labels(shard)
        self.searches_waiting = Gauge(
            "sift_shard_searches_waiting",
            "Searches waiting for or running on the shard's search thread",
            ["shard"],
            registry=self.registry,
        ).labels(shard)
        self.result_cache_hits = Counter(
            "sift_shard_search_result_cache_hits",
            "Searches a shard answered from its kept replies (--result-cache-size)",
            ["shard"],
            registry=self.registry,
        ).labels(shard)
        self.batch_seconds = Histogram(
            "sift_shard_apply_batch_duration_seconds",
            "Time a shard took to apply (or prepare, or commit) its part of a batch",
            ["shard"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0),
            registry=self.registry,
        ).labels(shard)
        self.registry.register(ProcessMetrics(f"shard-{shard_id}"))
        self.registry.register(_StoreMetrics(f"shard-{shard_id}", store))


class _StoreMetrics(Collector):
    """Read at collection: the contract's sizes and counts are the shard's share, which the gateway
    sums over shards; the ``sift_lmdb_*`` ones keep the process apart."""

    def __init__(self, process: str, store: ShardStore) -> None:
        self._process = process
        self._store = store

    def collect(self) -> Iterator[Metric]:
        sizes = self._store.sizes()
        yield from lmdb_families(self._process, sizes["databaseSize"], sizes["usedDatabaseSize"])
        documents = GaugeMetricFamily(
            "meilisearch_index_docs_count", "Meilisearch Index Docs Count", labels=["index"]
        )
        for uid, count in sorted(self._store.document_counts().items()):
            documents.add_metric([uid], count)
        yield documents
