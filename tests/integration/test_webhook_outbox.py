"""The webhook outbox across ``kill -9`` of the scheduler: no notification of a finished batch is lost,
and one interrupted during its delivery is sent once more, under the same delivery id."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator

import httpx
import pytest

from tests.support.client import wait_task
from tests.support.cluster import RunningCluster
from tests.support.receiver import Receiver


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with Receiver() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def cluster(receiver: Receiver) -> Iterator[RunningCluster]:
    with RunningCluster(
        "--task-webhook-url", f"{receiver.url}/hook",
        "--experimental-allowed-ip-networks", "127.0.0.0/8",
        shards=2,
    ) as running:  # fmt: skip
        yield running


def _finished_task(cluster: RunningCluster, index: str) -> int:
    response = httpx.post(f"{cluster.url}/indexes/{index}/documents", json=[{"id": 1}])
    uid: int = response.json()["taskUid"]
    assert wait_task(cluster, uid)["status"] == "succeeded"
    return uid


def _kill_scheduler(cluster: RunningCluster, receiver: Receiver | None = None, status: int = 200) -> None:
    """``kill -9`` of the scheduler; ``receiver`` answers ``status`` from then on."""
    pid = cluster.kill_backend("scheduler")
    if receiver is not None:
        receiver.statuses = [status]
    cluster.wait_replaced("scheduler", pid)


def test_notifications_waiting_for_a_retry_are_delivered_after_a_kill(
    cluster: RunningCluster, receiver: Receiver
) -> None:
    receiver.statuses = [503]
    before = len(receiver.received)
    uids = {_finished_task(cluster, f"retrying-{i}") for i in range(5)}  # five batches
    tried = receiver.wait_for(before + 2)[before:]  # the failing receiver is probed, the rest wait
    ids = {t["uid"]: r.headers["x-sift-delivery"] for r in tried for t in r.tasks}
    _kill_scheduler(cluster, receiver)  # the outbox holds the five notifications
    deadline = time.monotonic() + 30
    delivered: dict[int, str] = {}
    while not set(delivered) >= uids and time.monotonic() < deadline:
        answered = [r for r in receiver.received[before:] if r.status == 200]
        delivered = {t["uid"]: r.headers["x-sift-delivery"] for r in answered for t in r.tasks}
        time.sleep(0.05)
    assert set(delivered) >= uids
    assert ids and all(delivered[uid] == ids[uid] for uid in ids), "the delivery id survives the restart"


def test_a_delivery_cut_by_a_kill_is_sent_again_once(cluster: RunningCluster, receiver: Receiver) -> None:
    receiver.statuses = [200]
    receiver.delay = 3.0  # the scheduler is killed while the receiver holds the request
    before = len(receiver.received)
    uid = _finished_task(cluster, "interrupted")
    receiver.wait_for(before + 1)
    _kill_scheduler(cluster)
    receiver.delay = 0.0
    received = receiver.wait_for(before + 2)[before:]
    time.sleep(1.0)  # nothing more arrives
    mine = [r for r in receiver.received[before:] if uid in {t["uid"] for t in r.tasks}]
    assert len(mine) == 2, "delivered again after the restart, once"
    assert mine[0].headers["x-sift-delivery"] == mine[1].headers["x-sift-delivery"]
    assert mine[0].raw == mine[1].raw
    assert len(received) == len(receiver.received[before:])


def test_kills_during_a_stream_of_batches_lose_no_notification(
    cluster: RunningCluster, receiver: Receiver
) -> None:
    """Tasks keep finishing while the scheduler is killed three times: every finished task reaches
    the receiver, and no delivery id arrives more than twice."""
    receiver.statuses, receiver.delay = [200], 0.05
    before = len(receiver.received)
    uids: list[int] = []
    with httpx.Client(base_url=cluster.url) as client:
        for round_ in range(3):
            for i in range(40):
                response = client.post(f"/indexes/stream-{i % 3}/documents", json=[{"id": round_ * 100 + i}])
                uids.append(response.json()["taskUid"])
            time.sleep(0.3)
            _kill_scheduler(cluster)
    for uid in uids:
        assert wait_task(cluster, uid, timeout=60)["status"] == "succeeded"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        notified = {t["uid"] for r in receiver.received[before:] for t in r.tasks}
        if notified >= set(uids):
            break
        time.sleep(0.1)
    assert set(uids) <= notified, sorted(set(uids) - notified)
    copies = Counter(r.headers["x-sift-delivery"] for r in receiver.received[before:])
    assert max(copies.values()) <= 2, copies.most_common(3)
    receiver.delay = 0.0
