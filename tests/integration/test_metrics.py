"""``GET /metrics`` (core.md §3.12, issue 25): scraped after a known workload and read with
prometheus-client's own text parser; the contract's names and labels with their meaning, Sift's own
per-process figures, the feature gate (launch option and runtime flag) and the key it needs.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import orjson
import pytest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.search_support import assert_error
from tests.support.auth import MASTER_KEY, bearer, create_key, secured_cluster
from tests.support.client import client_for, switch_features, wait_task
from tests.support.cluster import REPO_ROOT, RunningCluster
from tests.support.receiver import Receiver

DOCS = [{"id": k, "title": f"book {k}"} for k in range(7)]
SEARCH = "/indexes/{index_uid}/search"
DISABLED = (
    "Getting metrics requires enabling the `metrics` experimental feature. "
    "See https://github.com/meilisearch/product/discussions/625"
)
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(cluster: RunningCluster, key: str | None = None) -> Samples:
    response = httpx.get(f"{cluster.url}/metrics", headers=bearer(key) if key else {}, timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/plain; version=0.0.4"
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def _names(family: Metric) -> set[str]:
    """The family's sample names, and those it would have (``_total``, buckets) without samples yet."""
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count")}.get(family.type, ("",))
    return {sample.name for sample in family.samples} | {family.name + suffix for suffix in suffixes}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[name, frozenset(labels.items())]


@pytest.fixture(scope="module")
def secured() -> Iterator[RunningCluster]:
    options = ("--experimental-enable-metrics", "--experimental-allowed-ip-networks", "127.0.0.0/8")
    with secured_cluster(*options, shards=2) as running:
        yield running


def test_counters_after_a_known_workload(secured: RunningCluster) -> None:
    client = client_for(secured, MASTER_KEY)
    wait_task(secured, client.index("books").add_documents(DOCS).task_uid, key=MASTER_KEY)
    for query in ("book", "book 3", "nothing"):
        client.index("books").search(query)
    for _ in range(2):
        missing = httpx.get(f"{secured.url}/indexes/nowhere/search", headers=bearer(MASTER_KEY))
        assert missing.status_code == 404
    samples = scrape(secured, MASTER_KEY)

    requests = "meilisearch_http_requests_total"
    assert value(samples, requests, method="POST", path=SEARCH, status="200") == 3
    assert value(samples, requests, method="GET", path=SEARCH, status="404") == 2
    assert value(samples, requests, method="POST", path="/indexes/{index_uid}/documents", status="202") == 1
    assert value(samples, requests, method="GET", path="/tasks/{task_id}", status="200") >= 1
    timings = "meilisearch_http_response_time_seconds"
    assert value(samples, f"{timings}_count", method="POST", path=SEARCH) == 3
    assert value(samples, f"{timings}_bucket", method="POST", path=SEARCH, le="+Inf") == 3
    assert value(samples, f"{timings}_bucket", method="POST", path=SEARCH, le="10.0") == 3

    # Each shard's share, summed: 7 documents over 2 shards, one index, one succeeded task.
    assert value(samples, "meilisearch_index_docs_count", index="books") == len(DOCS)
    assert value(samples, "meilisearch_index_count") == 1
    assert value(samples, "meilisearch_nb_tasks", kind="statuses", value="succeeded") == 1
    assert value(samples, "meilisearch_nb_tasks", kind="statuses", value="enqueued") == 0
    assert value(samples, "meilisearch_nb_tasks", kind="types", value="documentAdditionOrUpdate") == 1
    assert value(samples, "meilisearch_nb_tasks", kind="indexes", value="books") == 1
    assert value(samples, "meilisearch_last_indexed_documents_count", batch_uid="0", index="books") == 7
    assert (
        value(
            samples,
            "meilisearch_last_finished_batches_progress_trace_ms",
            batch_uid="0",
            step_name="processing tasks",
        )
        >= 0
    )
    assert value(samples, "meilisearch_is_indexing") == 0
    assert time.time() - 120 < value(samples, "meilisearch_last_update") <= time.time()
    assert value(samples, "meilisearch_search_queue_size") == 1000
    assert value(samples, "meilisearch_searches_running") == 0
    assert value(samples, "meilisearch_task_queue_max_size") == 20 * 1024**3
    used = value(samples, "meilisearch_task_queue_used_size")
    assert (
        value(samples, "meilisearch_task_queue_size_until_stop_registering") == int(0.4 * 20 * 1024**3) - used
    )

    # Beyond the contract: every process apart, and the contract's sizes as their sum.
    processes = ("gateway", "scheduler", "shard-0", "shard-1")
    for process in processes:
        assert value(samples, "sift_process_resident_memory_bytes", process=process) > 10_000_000
    backends = processes[1:]
    own_sizes = sum(value(samples, "sift_lmdb_size_bytes", process=p) for p in backends)
    assert value(samples, "meilisearch_db_size_bytes") == own_sizes > 0
    for shard in ("0", "1"):
        assert value(samples, "sift_shard_search_duration_seconds_count", shard=shard) >= 3
        assert value(samples, "sift_shard_apply_batch_duration_seconds_count", shard=shard) >= 1
        peer = f"shard-{shard}"
        assert value(samples, "sift_grpc_round_trip_seconds_count", peer=peer, method="Search") >= 3
    assert value(samples, "sift_batch_duration_seconds_count", type="documentAdditionOrUpdate") == 1

    # The scrape itself is counted once it is answered, as the reference counts it.
    again = scrape(secured, MASTER_KEY)
    assert value(again, requests, method="GET", path="/metrics", status="200") >= 1
    assert value(again, requests, method="POST", path=SEARCH, status="200") == 3


def test_degraded_searches_are_counted(secured: RunningCluster) -> None:
    """A search the cutoff stops before its ranking is done (``searchCutoffMs: 0``) counts once."""
    client = client_for(secured, MASTER_KEY)
    before = value(scrape(secured, MASTER_KEY), "meilisearch_degraded_search_requests")
    client.index("books").search("book 3")
    assert value(scrape(secured, MASTER_KEY), "meilisearch_degraded_search_requests") == before
    task = client.index("books").update_settings({"searchCutoffMs": 0})
    wait_task(secured, task.task_uid, key=MASTER_KEY)
    client.index("books").search("book 3")
    assert value(scrape(secured, MASTER_KEY), "meilisearch_degraded_search_requests") == before + 1
    client.index("books").search("book 3", {"matchingStrategy": "bm25"})  # the bm25 rule's own cutoff
    assert value(scrape(secured, MASTER_KEY), "meilisearch_degraded_search_requests") == before + 2


def test_the_dashboard_reads_served_metrics(secured: RunningCluster) -> None:
    """Every series deploy/grafana-dashboard.json queries is one /metrics serves."""
    text = httpx.get(f"{secured.url}/metrics", headers=bearer(MASTER_KEY)).text
    served = {name for family in text_string_to_metric_families(text) for name in _names(family)}
    dashboard = (REPO_ROOT / "deploy" / "grafana-dashboard.json").read_text()
    queried = set(re.findall(r"\b((?:meilisearch|sift)_[a-z_]+)", dashboard))
    assert len(queried) > 25
    assert not queried - served, sorted(queried - served)


def test_metrics_need_a_key_with_the_action(secured: RunningCluster) -> None:
    url = f"{secured.url}/metrics"
    assert httpx.get(url).json()["code"] == "missing_authorization_header"
    without = create_key(secured, actions=["search", "stats.get"], indexes=["*"])["key"]
    refused = httpx.get(url, headers=bearer(without))
    assert (refused.status_code, refused.json()["code"]) == (403, "invalid_api_key")
    scoped = create_key(secured, actions=["*"], indexes=["books"])["key"]
    assert httpx.get(url, headers=bearer(scoped)).json()["message"] == "The provided API key is invalid."
    allowed = create_key(secured, actions=["metrics.get"], indexes=["*"])["key"]
    scrape(secured, allowed)


def test_webhook_deliveries_are_counted_by_outcome(secured: RunningCluster) -> None:
    client = client_for(secured, MASTER_KEY)
    with Receiver() as receiver:
        created = httpx.post(
            f"{secured.url}/webhooks", json={"url": receiver.url}, headers=bearer(MASTER_KEY)
        ).json()
        try:
            wait_task(secured, client.index("notified").add_documents([{"id": 1}]).task_uid, key=MASTER_KEY)
            receiver.wait_for(1)
            deadline = time.monotonic() + 10
            while True:  # the outcome is counted once the delivery's answer is in
                samples = scrape(secured, MASTER_KEY)
                if samples.get(("sift_webhook_deliveries_total", frozenset({("outcome", "delivered")}))):
                    break
                assert time.monotonic() < deadline, "no delivered notification counted"
                time.sleep(0.1)
        finally:
            httpx.delete(f"{secured.url}/webhooks/{created['uuid']}", headers=bearer(MASTER_KEY))


class SlowEmbedder:
    """A REST embedding provider on loopback answering after ``delay`` s: a batch embedding documents
    stays running meanwhile."""

    def __init__(self, delay: float) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                texts = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))["input"]
                time.sleep(delay)
                body = orjson.dumps({"data": [[0.1, 0.2, 0.3] for _ in texts]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/embed"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_a_running_batch_shows(secured: RunningCluster) -> None:
    embedder = SlowEmbedder(delay=3)
    try:
        client = client_for(secured, MASTER_KEY)
        settings = {
            "source": "rest",
            "url": embedder.url,
            "request": {"input": ["{{text}}", "{{..}}"]},
            "response": {"data": ["{{embedding}}", "{{..}}"]},
            "dimensions": 3,
        }
        task = client.index("embedded").update_settings({"embedders": {"slow": settings}})
        wait_task(secured, task.task_uid, key=MASTER_KEY)
        task = client.index("embedded").add_documents([{"id": 1, "title": "slow"}])
        deadline = time.monotonic() + 10
        while value(samples := scrape(secured, MASTER_KEY), "meilisearch_is_indexing") != 1:
            assert time.monotonic() < deadline, "no batch seen running"
            time.sleep(0.05)
        assert value(samples, "meilisearch_nb_tasks", kind="statuses", value="processing") == 1
        running = {
            dict(labels)["step_name"]: sample
            for (name, labels), sample in samples.items()
            if name == "meilisearch_batch_running_progress_trace"
        }
        assert 0 <= running["processing tasks"] <= 1, running
        assert wait_task(secured, task.task_uid, key=MASTER_KEY)["status"] == "succeeded"
        after = scrape(secured, MASTER_KEY)
        assert value(after, "meilisearch_is_indexing") == 0
        assert value(after, "meilisearch_nb_tasks", kind="statuses", value="processing") == 0
        assert not [name for name, _ in after if name == "meilisearch_batch_running_progress_trace"]
    finally:
        embedder.server.shutdown()


def test_enabled_and_disabled_at_runtime() -> None:
    with RunningCluster(shards=1) as running:
        url = f"{running.url}/metrics"
        assert_error(httpx.get(url), "feature_not_enabled", DISABLED)
        httpx.get(f"{running.url}/version")  # not counted: metrics are off
        switch_features(running, metrics=True)
        httpx.get(f"{running.url}/version")
        samples = scrape(running)
        assert (
            value(samples, "meilisearch_http_requests_total", method="GET", path="/version", status="200")
            == 1
        )
        switch_features(running, metrics=False)
        assert_error(httpx.get(url), "feature_not_enabled", DISABLED)
