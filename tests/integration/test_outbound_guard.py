"""The outbound guard on webhook targets (``common/outbound.py``): without
``--experimental-allowed-ip-networks``, a target resolving to a non-public address is refused before
any connection, whatever form the address takes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.support.client import wait_task
from tests.support.cluster import RunningCluster
from tests.support.receiver import Receiver


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with Receiver() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster("--experimental-logs-mode", "json", shards=1) as running:
        yield running


def _refusal(cluster: RunningCluster, webhook: str, timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in list(cluster.output):
            if line.startswith("{"):
                record = orjson.loads(line)
                if record.get("webhook") == webhook and record["event"].startswith("webhook notification"):
                    return dict(record)
        time.sleep(0.05)
    raise TimeoutError(f"no outcome logged for webhook {webhook}")


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1"),  # loopback
        ("[::ffff:127.0.0.1]", "::ffff:7f00:1"),  # loopback, as an IPv4-mapped IPv6 address
        ("localhost", None),  # a name resolving to loopback
        ("[::1]", "::1"),
        ("0x7f.1", "127.0.0.1"),  # a URL's other spellings of an IPv4 address are resolved first
    ],
)
def test_loopback_in_any_form_is_refused(
    cluster: RunningCluster, receiver: Receiver, host: str, address: str | None
) -> None:
    url = f"http://{host}:{receiver.port}/hook"
    created = httpx.post(f"{cluster.url}/webhooks", json={"url": url}).json()
    try:
        uid = httpx.post(f"{cluster.url}/indexes/guarded/documents", json=[{"id": 1}]).json()["taskUid"]
        assert wait_task(cluster, uid)["status"] == "succeeded"
        record = _refusal(cluster, created["uuid"])
        assert record["event"] == "webhook notification refused", record
        assert record["level"] == "warning" and record["attempts"] == 1
        assert "is not a public address" in record["reason"]
        if address is not None:
            assert f"resolves to {address}," in record["reason"]
        assert receiver.received == []
    finally:
        httpx.delete(f"{cluster.url}/webhooks/{created['uuid']}")


@pytest.mark.parametrize(
    "host", ["10.1.2.3", "192.168.0.1", "172.16.5.4", "169.254.169.254", "100.64.0.1", "[fd00::1]", "0.0.0.0"]
)
def test_private_and_link_local_ranges_are_refused_without_connecting(
    cluster: RunningCluster, host: str
) -> None:
    created = httpx.post(f"{cluster.url}/webhooks", json={"url": f"http://{host}/hook"}).json()
    try:
        uid = httpx.post(f"{cluster.url}/indexes/guarded/documents", json=[{"id": 2}]).json()["taskUid"]
        assert wait_task(cluster, uid)["status"] == "succeeded"
        record = _refusal(cluster, created["uuid"])
        assert record["event"] == "webhook notification refused", record  # no connection attempt, no retry
    finally:
        httpx.delete(f"{cluster.url}/webhooks/{created['uuid']}")


def test_allowed_networks_let_only_those_through(receiver: Receiver) -> None:
    options = ("--experimental-allowed-ip-networks", "10.0.0.0/8", "--experimental-logs-mode", "json")
    with RunningCluster(*options, shards=1) as cluster:
        created = httpx.post(f"{cluster.url}/webhooks", json={"url": f"{receiver.url}/hook"}).json()
        uid = httpx.post(f"{cluster.url}/indexes/guarded/documents", json=[{"id": 1}]).json()["taskUid"]
        assert wait_task(cluster, uid)["status"] == "succeeded"
        assert _refusal(cluster, created["uuid"])["event"] == "webhook notification refused"
    with RunningCluster("--experimental-allowed-ip-networks", "any", shards=1) as cluster:
        httpx.post(f"{cluster.url}/webhooks", json={"url": f"{receiver.url}/hook"}).raise_for_status()
        uid = httpx.post(f"{cluster.url}/indexes/guarded/documents", json=[{"id": 1}]).json()["taskUid"]
        assert wait_task(cluster, uid)["status"] == "succeeded"
        assert uid in {t["uid"] for t in receiver.wait_for(1)[0].tasks}
