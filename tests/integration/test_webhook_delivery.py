"""Task notifications reach real receivers on loopback (allowed by ``--experimental-allowed-ip-networks``):
payload and headers, one per batch, retries, signatures, the outbox across ``kill -9`` of the scheduler,
and a dead receiver that does not slow task processing."""

from __future__ import annotations

import gzip
import hashlib
import hmac
import itertools
import math
import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.support.client import wait_task
from tests.support.cluster import RunningCluster
from tests.support.receiver import BlackHole, Received, Receiver

AUTHORIZATION = "Bearer launch-secret-0123456789abcdefghijkl"
LAUNCH_SECRET = "launch-signing-secret"


@pytest.fixture(scope="module")
def launch_receiver() -> Iterator[Receiver]:
    with Receiver() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def cluster(launch_receiver: Receiver) -> Iterator[RunningCluster]:
    with RunningCluster(
        "--task-webhook-url", f"{launch_receiver.url}/launch?x=1&y=%20z",
        "--task-webhook-authorization-header", AUTHORIZATION,
        "--task-webhook-signing-secret", LAUNCH_SECRET,
        "--experimental-allowed-ip-networks", "127.0.0.0/8,::1/128",
        "--webhook-timeout", "2",
        "--experimental-logs-mode", "json",
        shards=2,
    ) as running:  # fmt: skip
        yield running


@pytest.fixture
def receiver(cluster: RunningCluster) -> Iterator[Receiver]:
    """A receiver with a runtime webhook of its own, deleted after the test."""
    with Receiver() as receiver:
        created = httpx.post(f"{cluster.url}/webhooks", json={"url": f"{receiver.url}/rt"}).json()
        yield receiver
        httpx.delete(f"{cluster.url}/webhooks/{created['uuid']}").raise_for_status()


def _add(cluster: RunningCluster, index: str, documents: list[dict[str, Any]]) -> int:
    response = httpx.post(f"{cluster.url}/indexes/{index}/documents", json=documents)
    assert response.status_code == 202, response.text
    uid: int = response.json()["taskUid"]
    return uid


def _finished(cluster: RunningCluster, uid: int) -> dict[str, Any]:
    task = wait_task(cluster, uid)
    assert task["status"] == "succeeded", task
    return task


def _about(received: list[Received], uids: set[int]) -> list[Received]:
    return [r for r in received if {t["uid"] for t in r.tasks} & uids]


def _logs(cluster: RunningCluster, event: str) -> list[dict[str, Any]]:
    records = [orjson.loads(line) for line in list(cluster.output) if line.startswith("{")]
    return [r for r in records if r.get("event") == event]


def _wait_log(cluster: RunningCluster, event: str, timeout: float = 20.0, **fields: Any) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for record in _logs(cluster, event):
            if all(record.get(k) == v for k, v in fields.items()):
                return record
        time.sleep(0.05)
    raise TimeoutError(f"no `{event}` log with {fields}")


def test_launch_webhook_gets_each_batch_as_ndjson_task_objects(
    cluster: RunningCluster, launch_receiver: Receiver
) -> None:
    uids = {_add(cluster, "payload", [{"id": i}]) for i in range(5)}
    uids.add(_add(cluster, "payload", [{"noid": 1}]))  # a failed task is notified too
    tasks = {uid: wait_task(cluster, uid) for uid in uids}
    batches = {task["batchUid"] for task in tasks.values()}
    deadline = time.monotonic() + 20
    while len(_about(launch_receiver.received, uids)) < len(batches) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # a second notification of a batch would arrive now
    notifications = _about(launch_receiver.received, uids)
    assert len(notifications) == len(batches), "one notification per batch"
    for notification in notifications:
        batch_uid = notification.tasks[0]["batchUid"]
        in_batch = httpx.get(f"{cluster.url}/tasks", params={"batchUids": batch_uid}).json()["results"]
        # Every task the batch finished, as GET /tasks shows it, by uid, one per line.
        assert notification.tasks == sorted(in_batch, key=lambda t: t["uid"])
        assert gzip.decompress(notification.raw).endswith(b"}\n")
        assert notification.path == "/launch?x=1&y=%20z"
        headers = notification.headers
        assert headers["content-type"] == "application/x-ndjson"
        assert headers["content-encoding"] == "gzip"
        assert headers["authorization"] == AUTHORIZATION
        assert str(uuid.UUID(headers["x-sift-delivery"])) == headers["x-sift-delivery"]
        expected = hmac.new(LAUNCH_SECRET.encode(), notification.raw, hashlib.sha256).hexdigest()
        assert headers["x-sift-signature"] == f"sha256={expected}"
    assert {t["uid"] for n in notifications for t in n.tasks} >= uids
    assert any(t["status"] == "failed" for n in notifications for t in n.tasks)


def test_runtime_webhook_headers_and_no_signature_unless_configured(
    cluster: RunningCluster, receiver: Receiver
) -> None:
    webhook = httpx.get(f"{cluster.url}/webhooks").json()["results"][1]
    patch = {"headers": {"X-Custom": "v", "Authorization": "Bearer rt", "Content-Type": "text/plain"}}
    httpx.patch(f"{cluster.url}/webhooks/{webhook['uuid']}", json=patch).raise_for_status()
    uid = _add(cluster, "headers", [{"id": 1}])
    _finished(cluster, uid)
    [notification] = _about(receiver.wait_for(1), {uid})
    headers = notification.headers
    assert (headers["x-custom"], headers["authorization"]) == ("v", "Bearer rt")
    assert headers["content-type"] == "application/x-ndjson"  # set by the delivery, not by the webhook
    assert "x-sift-signature" not in headers
    patch = {"signingSecret": "rt-secret"}
    httpx.patch(f"{cluster.url}/webhooks/{webhook['uuid']}", json=patch).raise_for_status()
    uid = _add(cluster, "headers", [{"id": 2}])
    _finished(cluster, uid)
    [signed] = _about(receiver.wait_for(2), {uid})
    expected = hmac.new(b"rt-secret", signed.raw, hashlib.sha256).hexdigest()
    assert signed.headers["x-sift-signature"] == f"sha256={expected}"


def test_cancelation_batch_notifies_the_canceled_tasks(cluster: RunningCluster, receiver: Receiver) -> None:
    blocker = _add(cluster, "cancel", [{"id": i, "text": "word " * 200} for i in range(20_000)])
    queued = [_add(cluster, "cancel", [{"id": i}]) for i in range(3)]
    response = httpx.post(f"{cluster.url}/tasks/cancel", params={"uids": ",".join(map(str, queued))})
    cancel = response.json()["taskUid"]
    assert wait_task(cluster, cancel)["details"]["canceledTasks"] == 3
    wait_task(cluster, blocker, timeout=60)
    deadline = time.monotonic() + 20
    while not _about(receiver.received, {cancel}) and time.monotonic() < deadline:
        time.sleep(0.05)
    [notification] = _about(receiver.received, {cancel})
    statuses = {t["uid"]: t["status"] for t in notification.tasks}
    assert statuses == {**dict.fromkeys(queued, "canceled"), cancel: "succeeded"}


def test_retries_after_500_until_success(cluster: RunningCluster) -> None:
    with Receiver(statuses=[500, 503, 429, 408, 200]) as receiver:
        created = httpx.post(f"{cluster.url}/webhooks", json={"url": receiver.url}).json()
        try:
            uid = _add(cluster, "retries", [{"id": 1}])
            _finished(cluster, uid)
            attempts = receiver.wait_for(5, timeout=30)
            time.sleep(1.5)  # no sixth attempt after the success
            assert len(receiver.received) == 5
            assert len({a.headers["x-sift-delivery"] for a in attempts}) == 1, "one delivery id for every try"
            assert len({a.raw for a in attempts}) == 1
            gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(attempts)]
            assert all(gap >= 0.2 for gap in gaps) and gaps[-1] > gaps[0], gaps  # growing backoff
            record = _wait_log(cluster, "webhook notification delivered", webhook=created["uuid"])
            assert record["attempts"] == 5 and record["status"] == 200
        finally:
            httpx.delete(f"{cluster.url}/webhooks/{created['uuid']}")


@pytest.mark.parametrize("status", [400, 404, 410, 307])
def test_no_retry_after_a_client_error_or_redirect(cluster: RunningCluster, status: int) -> None:
    with Receiver(statuses=[status]) as receiver:
        created = httpx.post(f"{cluster.url}/webhooks", json={"url": receiver.url}).json()
        try:
            _finished(cluster, _add(cluster, "rejected", [{"id": status}]))
            receiver.wait_for(1)
            record = _wait_log(cluster, "webhook notification rejected", webhook=created["uuid"])
            assert record["status"] == status
            time.sleep(1.5)
            assert len(receiver.received) == 1
        finally:
            httpx.delete(f"{cluster.url}/webhooks/{created['uuid']}")


def test_guard_keeps_the_name_as_host_header(cluster: RunningCluster) -> None:
    """``localhost`` is resolved once by the guard (allowed here) and called at its checked address."""
    with Receiver() as receiver:
        url = f"http://localhost:{receiver.port}/named"
        created = httpx.post(f"{cluster.url}/webhooks", json={"url": url}).json()
        try:
            uid = _add(cluster, "named", [{"id": 1}])
            _finished(cluster, uid)
            [notification] = _about(receiver.wait_for(1), {uid})
            assert notification.headers["host"] == f"localhost:{receiver.port}"
        finally:
            httpx.delete(f"{cluster.url}/webhooks/{created['uuid']}")


def test_deleted_webhook_notifications_are_dropped(cluster: RunningCluster) -> None:
    with Receiver(statuses=[503]) as receiver:
        created = httpx.post(f"{cluster.url}/webhooks", json={"url": receiver.url}).json()
        _finished(cluster, _add(cluster, "dropped", [{"id": 1}]))
        receiver.wait_for(1)
        httpx.delete(f"{cluster.url}/webhooks/{created['uuid']}").raise_for_status()
        _wait_log(cluster, "webhook notification dropped", webhook=created["uuid"])


def test_a_refusing_receiver_is_probed_by_one_notification_at_a_time(cluster: RunningCluster) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/closed"  # nothing listens: refused at once
    created = httpx.post(f"{cluster.url}/webhooks", json={"url": url}).json()
    try:
        started = time.monotonic()
        for i in range(30):  # thirty batches, each a notification to the refusing receiver
            _finished(cluster, _add(cluster, f"refused-{i % 3}", [{"id": i}]))
        time.sleep(max(0.0, 4.0 - (time.monotonic() - started)))
        # Until a probe's retry reports the others waiting behind it (on a loaded machine the last
        # batches may finish after the probe's latest retry).
        deadline = time.monotonic() + 30
        while True:
            retries = [
                r
                for r in _logs(cluster, "webhook notification failed, will retry")
                if r["webhook"] == created["uuid"]
            ]
            if (retries and retries[-1]["waiting"] >= 25) or time.monotonic() > deadline:
                break
            time.sleep(0.25)
        elapsed = time.monotonic() - started
        # One probe backing off from 0.25-0.5 s, doubling: at most ~1 + log2(seconds / 0.25) tries, not
        # 30 times that (33 in 4 s when every notification retried on its own).
        assert 2 <= len(retries) <= 3 + math.log2(elapsed / 0.25 + 1), (len(retries), elapsed)
        assert retries[-1]["waiting"] >= 25
    finally:
        httpx.delete(f"{cluster.url}/webhooks/{created['uuid']}")


def test_dead_receiver_does_not_slow_a_thousand_tasks(cluster: RunningCluster) -> None:
    """A receiver that accepts connections and never answers holds each delivery for the whole
    ``--webhook-timeout`` (2 s here): hundreds of batches would take minutes if anything waited for it."""

    def run(index: str) -> tuple[float, int]:
        started = time.monotonic()
        with httpx.Client(base_url=cluster.url) as client:
            uids = [
                client.post(f"/indexes/{index}-{i % 4}/documents", json=[{"id": i}]).json()["taskUid"]
                for i in range(1000)
            ]
        batches = {_finished(cluster, uid)["batchUid"] for uid in (uids[0], uids[-1])}
        return time.monotonic() - started, max(batches) - min(batches)

    baseline, _ = run("alive")
    with BlackHole() as dead:
        created = httpx.post(f"{cluster.url}/webhooks", json={"url": dead.url}).json()
        try:
            slowed, batches = run("dead")
        finally:
            httpx.delete(f"{cluster.url}/webhooks/{created['uuid']}")
    print(f"1,000 tasks: {baseline:.2f} s, {slowed:.2f} s with a dead receiver ({batches} batches)")
    assert batches >= 100
    # Loose, for a shared 2-core machine: waiting for the receiver would cost over 100 * 2 s.
    assert slowed < baseline * 2 + 5, (baseline, slowed)
