"""The scheduler's Prometheus registry: the contract's task, batch and index figures (core.md §3.12),
batch durations and webhook deliveries, read from the store and the executor at collection."""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from common.metrics.process import ProcessMetrics, lmdb_families
from common.task_vocabulary import ENQUEUED, PROCESSING, STATUSES, TYPES
from scheduler.delivery import Deliverer
from scheduler.executor import Executor
from scheduler.progress import FinishedBatch
from scheduler.server import TASK_DB_MAX_BYTES, TASK_DB_STOP_BYTES
from scheduler.store import SchedulerStore

_DOCUMENT_TASKS = frozenset({"documentAdditionOrUpdate", "documentEdition", "documentDeletion"})


class SchedulerMetrics:
    def __init__(self, store: SchedulerStore, executor: Executor, deliverer: Deliverer) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.batch_seconds = Histogram(
            "sift_batch_duration_seconds",
            "Time from a batch's start to its commit, by the type of its tasks",
            ["type"],
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0),
            registry=self.registry,
        )
        self.last_batch: FinishedBatch | None = None
        self.last_indexing: FinishedBatch | None = None
        self.registry.register(ProcessMetrics("scheduler"))
        self.registry.register(_Queue(store, executor, deliverer, self))
        executor.on_finished = self.batch_finished

    def batch_finished(self, batch: FinishedBatch) -> None:
        kind = batch.tasks[0]["type"] if batch.tasks else "unknown"
        self.batch_seconds.labels(kind).observe(batch.duration_ns / 1e9)
        self.last_batch = batch
        if kind in _DOCUMENT_TASKS:
            self.last_indexing = batch


class _Queue(Collector):
    def __init__(
        self, store: SchedulerStore, executor: Executor, deliverer: Deliverer, metrics: SchedulerMetrics
    ) -> None:
        self._store = store
        self._executor = executor
        self._deliverer = deliverer
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        store = self._store
        sizes = store.sizes()
        yield from lmdb_families("scheduler", sizes["databaseSize"], sizes["usedDatabaseSize"])
        indexes = store.list_indexes()
        yield GaugeMetricFamily("meilisearch_index_count", "Meilisearch Index Count", value=len(indexes))
        updated = max((index["updatedNs"] for index in indexes), default=0)
        yield GaugeMetricFamily("meilisearch_last_update", "Meilisearch Last Update", value=updated // 10**9)
        yield from self._tasks()
        yield from self._batches()
        used = store.database_size()
        yield GaugeMetricFamily(
            "meilisearch_task_queue_max_size", "Meilisearch Task Queue Max Size", value=TASK_DB_MAX_BYTES
        )
        yield GaugeMetricFamily(
            "meilisearch_task_queue_used_size", "Meilisearch Task Queue Used Size", value=used
        )
        yield GaugeMetricFamily(
            "meilisearch_task_queue_size_until_stop_registering",
            "Meilisearch Task Queue Size Until Stop Registering",
            value=max(TASK_DB_STOP_BYTES - used, 0),
        )
        deliveries = CounterMetricFamily(
            "sift_webhook_deliveries", "Webhook notifications ended, by outcome", labels=["outcome"]
        )
        for outcome, count in sorted(self._deliverer.outcomes.items()):
            deliveries.add_metric([outcome], count)
        yield deliveries

    def _tasks(self) -> Iterator[Metric]:
        store, processing = self._store, self._executor.processing
        running = processing.task_uids if processing is not None else None
        tasks = GaugeMetricFamily(
            "meilisearch_nb_tasks", "Meilisearch Number of tasks", labels=["kind", "value"]
        )
        enqueued = store.bitmap(f"status:{ENQUEUED}")
        for status in sorted(STATUSES):
            if status == PROCESSING:
                count = len(running) if running is not None else 0
            elif status == ENQUEUED and running is not None:
                count = len(enqueued - running)
            else:
                count = len(store.bitmap(f"status:{status}"))
            tasks.add_metric(["statuses", status], count)
        for kind in sorted(TYPES):
            tasks.add_metric(["types", kind], len(store.bitmap(f"type:{kind}")))
        for uid, uids in sorted(store.bitmaps_with_prefix("indexUid:").items()):
            tasks.add_metric(["indexes", uid], len(uids))
        yield tasks
        waiting = enqueued - running if running is not None else enqueued
        oldest = store.get_task(waiting.min()) if waiting else None
        latency = max(time.time_ns() - oldest["enqueuedNs"], 0) / 1e9 if oldest is not None else 0.0
        yield GaugeMetricFamily(
            "meilisearch_task_queue_latency_seconds",
            "Meilisearch Task Queue Latency in Seconds",
            value=latency,
        )
        yield GaugeMetricFamily(
            "meilisearch_is_indexing", "Meilisearch Is Indexing", value=int(running is not None)
        )

    def _batches(self) -> Iterator[Metric]:
        processing = self._executor.processing
        running = GaugeMetricFamily(
            "meilisearch_batch_running_progress_trace",
            "The currently running progress trace",
            labels=["batch_uid", "step_name"],
        )
        if processing is not None:
            path: list[str] = []
            for step in processing.progress.view()["steps"]:  # type: ignore[attr-defined]
                path.append(step["currentStep"])
                ratio = step["finished"] / step["total"] if step["total"] else 0.0
                running.add_metric([str(processing.batch_uid), " > ".join(path)], ratio)
        yield running
        traces = GaugeMetricFamily(
            "meilisearch_last_finished_batches_progress_trace_ms",
            "The last few batches progress trace in milliseconds",
            labels=["batch_uid", "step_name"],
        )
        last = self._metrics.last_batch
        if last is not None:
            for step, nanoseconds in sorted(last.steps_ns.items()):
                traces.add_metric([str(last.uid), step], nanoseconds // 1_000_000)
        yield traces
        count = GaugeMetricFamily(
            "meilisearch_last_indexed_documents_count",
            "The last number of indexed documents in a batch",
            labels=["batch_uid", "index"],
        )
        duration = GaugeMetricFamily(
            "meilisearch_last_indexed_documents_duration_ms",
            "The duration in ms of the last batch that indexed documents",
            labels=["batch_uid", "index"],
        )
        indexing = self._metrics.last_indexing
        if indexing is not None:
            per_index: dict[str, int] = {}
            for task in indexing.tasks:
                outcome = indexing.outcomes.get(task["uid"])
                indexed = outcome.counts.get("indexedDocuments", 0) if outcome is not None else 0
                per_index[task["indexUid"]] = per_index.get(task["indexUid"], 0) + (indexed or 0)
            for uid, indexed in sorted(per_index.items()):
                count.add_metric([str(indexing.uid), uid], indexed)
                duration.add_metric([str(indexing.uid), uid], indexing.duration_ns // 1_000_000)
        yield count
        yield duration
