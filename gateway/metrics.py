"""The gateway's Prometheus registry (core.md §3.12) and the cluster's exposition.

The gateway counts HTTP requests and their times, the search queue, degraded searches and its gRPC
round trips while the ``metrics`` feature is on (at launch or at runtime). A scrape asks the scheduler
and every shard for their registries over gRPC (``Operations.Metrics``) and merges them with its own
(``common/metrics/families.py``): docs/architecture.md, "Metrics", says why this rather than
prometheus-client's multiprocess mode.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from typing import Any

import orjson
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from sanic import HTTPResponse, Request

from common.metrics.families import encode, merge, render
from common.metrics.process import ProcessMetrics
from common.rpc import json_pb2, operations_pb2_grpc
from gateway.features import RuntimeFeatures
from gateway.http.routing import PREFLIGHT_PATH, normalize_path
from gateway.search.queue import SearchQueue

HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
"""The reference's buckets for ``meilisearch_http_response_time_seconds``."""
RPC_BUCKETS = (0.0002, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)

# Sift's path parameters under the reference's names, so the ``path`` label reads the same.
_PARAMETER_NAMES = {
    "batch_uid": "batch_id",
    "task_uid": "task_id",
    "uid_or_key": "key",
    "rule_uid": "uid",
    "workspace": "workspace_uid",
}
_PARAMETER = re.compile(r"<(\w+)(?::[^>]*)?>")


def route_label(path: str) -> str:
    """``indexes/<index_uid:str>/search`` -> ``/indexes/{index_uid}/search``."""
    shown = _PARAMETER.sub(lambda match: "{" + _PARAMETER_NAMES.get(match[1], match[1]) + "}", path)
    return "/" + shown.lstrip("/")


class TimedRequest(Request):
    """A request that knows when it arrived, before routing (a 404 is timed too)."""

    __slots__ = ("arrived",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arrived = time.perf_counter()


class GatewayMetrics:
    def __init__(self, features: RuntimeFeatures, queue: SearchQueue) -> None:
        self._features = features
        self.registry = registry = CollectorRegistry(auto_describe=False)
        self.requests = Counter(
            "meilisearch_http_requests_total",
            "Meilisearch HTTP requests total",
            ["method", "path", "status"],
            registry=registry,
        )
        self.response_time = Histogram(
            "meilisearch_http_response_time_seconds",
            "Meilisearch HTTP response times",
            ["method", "path"],
            buckets=HTTP_BUCKETS,
            registry=registry,
        )
        self.degraded = Gauge(
            "meilisearch_degraded_search_requests",
            "Meilisearch number of degraded search requests",
            registry=registry,
        )
        self.personalized = Gauge(
            "meilisearch_personalized_search_requests",
            "Meilisearch number of search requests with personalization",
            registry=registry,
        )
        # Chat completions are not served (README, "Not supported"): the families exist, without samples.
        Counter(
            "meilisearch_chat_searches_total",
            "Total number of searches performed by the chat route",
            ["type"],
            registry=registry,
        )
        for name, help_text in (
            ("meilisearch_chat_prompt_tokens_total", "Total number of prompt tokens consumed"),
            ("meilisearch_chat_completion_tokens_total", "Total number of completion tokens consumed"),
            ("meilisearch_chat_tokens_total", "Total number of tokens consumed"),
        ):
            Counter(name, help_text, ["workspace", "model"], registry=registry)
        self.round_trip = Histogram(
            "sift_grpc_round_trip_seconds",
            "Time from the gateway sending an rpc to its reply, by peer process and method",
            ["peer", "method"],
            buckets=RPC_BUCKETS,
            registry=registry,
        )
        registry.register(_SearchQueue(queue))
        registry.register(ProcessMetrics("gateway"))
        self._labels: dict[str, str] = {}
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}
        """Each label set's counter and histogram, found once: ``labels()`` takes a lock each time."""
        self._round_trips: dict[tuple[str, str], Any] = {}

    def count_personalized(self) -> None:
        """One more search that asked for personalization (whatever the provider then answered)."""
        if self.active:
            self.personalized.inc()

    def round_trip_of(self, peer: str, method: str) -> Any:
        """The round-trip histogram of a peer and method (its child kept, as in ``record_response``)."""
        child = self._round_trips.get((peer, method))
        if child is None:
            child = self._round_trips[peer, method] = self.round_trip.labels(peer, method)
        return child

    @property
    def active(self) -> bool:
        """Whether the ``metrics`` feature is on: nothing is counted while it is off."""
        return self._features.enabled("metrics")

    def record_response(self, request: Request, response: HTTPResponse) -> None:
        if not self.active:
            return
        route = request.route
        if route is None:
            path = normalize_path(request.path)  # as the reference: an unknown path is its own label
        elif route.path == PREFLIGHT_PATH.lstrip("/"):
            return
        else:
            path = self._labels.get(route.path) or self._labels.setdefault(
                route.path, route_label(route.path)
            )
        key = (request.method, path, response.status)
        children = self._children.get(key)
        if children is None:
            method = request.method
            children = self._children[key] = (
                self.requests.labels(method, path, str(response.status)),
                self.response_time.labels(method, path),
            )
        children[0].inc()
        arrived = getattr(request, "arrived", None)
        if arrived is not None:
            children[1].observe(time.perf_counter() - arrived)

    async def exposition(self, operations: list[tuple[str, operations_pb2_grpc.OperationsStub]]) -> bytes:
        """Every process's registry, merged: the scheduler's and shards' asked concurrently, the
        gateway's own collected while they answer."""
        request = json_pb2.JsonRequest(json=b"{}")
        calls = asyncio.gather(
            *(stub.Metrics(request, wait_for_ready=True, timeout=10) for _, stub in operations)
        )
        await asyncio.sleep(0)  # the calls go out before the gateway's own collection
        own = encode(self.registry)
        families = [orjson.loads(reply.json)["families"] for reply in await calls]
        return render(merge([own, *families]))


class _SearchQueue(Collector):
    def __init__(self, queue: SearchQueue) -> None:
        self._queue = queue

    def collect(self) -> Iterator[Metric]:
        queue = self._queue
        yield GaugeMetricFamily(
            "meilisearch_search_queue_size", "Meilisearch Search Queue Size", queue.queue_size
        )
        yield GaugeMetricFamily("meilisearch_searches_running", "Meilisearch Searches Running", queue.running)
        yield GaugeMetricFamily(
            "meilisearch_searches_waiting_to_be_processed",
            "Meilisearch Searches Being Processed",
            queue.waiting,
        )
