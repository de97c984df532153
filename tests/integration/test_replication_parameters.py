"""``--experimental-replication-parameters``: the ``TaskId`` and ``DryRun`` headers of task-creating routes.

Documented behaviour (Meilisearch's replication parameters page and its announcement): a ``TaskId`` header
chooses the new task's uid, which must be above every uid seen so far; ``DryRun: true`` answers the
summarized task as if it were registered but stores nothing. Without the option both headers are ignored
(the reference 1.50 binary, which has no such option, ignores them too).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.integration.search_support import assert_error
from tests.support.client import wait_task
from tests.support.cluster import RunningCluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster("--experimental-replication-parameters", shards=2) as running:
        yield running


def _add(cluster: RunningCluster, index: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(
        f"{cluster.url}/indexes/{index}/documents",
        json=[{"id": 1, "title": "Dune"}],
        headers=headers,
        timeout=30,
    )


def test_task_id_header_chooses_the_uid(cluster: RunningCluster) -> None:
    first = _add(cluster, "chosen", {"TaskId": "40"})
    assert first.status_code == 202, first.text
    assert first.json()["taskUid"] == 40
    assert wait_task(cluster, 40)["status"] == "succeeded"
    # The next task without a header follows the chosen one; a settings route and a 200 route take it too.
    assert _add(cluster, "chosen").json()["taskUid"] == 41
    settings = httpx.patch(
        f"{cluster.url}/indexes/chosen/settings", json={"rankingRules": ["words"]}, headers={"TaskId": "50"}
    )
    assert settings.json()["taskUid"] == 50
    cancel = httpx.post(f"{cluster.url}/tasks/cancel", params={"uids": "50"}, headers={"TaskId": "60"})
    assert (cancel.status_code, cancel.json()["taskUid"]) == (200, 60)


def test_task_id_must_be_above_every_uid_seen(cluster: RunningCluster) -> None:
    uid = _add(cluster, "order").json()["taskUid"]
    response = _add(cluster, "order", {"TaskId": str(uid)})
    assert_error(
        response, "bad_request", prefix=f"Received bad task id: `TaskId` {uid} should be greater than"
    )
    assert _add(cluster, "order").json()["taskUid"] == uid + 1


@pytest.mark.parametrize("value", ["abc", "-1", "4294967296", ""])
def test_task_id_must_be_a_u32(cluster: RunningCluster, value: str) -> None:
    response = _add(cluster, "bad_header", {"TaskId": value})
    assert_error(
        response, "bad_request", prefix=f"Invalid `TaskId` header: `{value}` is not a valid task uid."
    )


def test_dry_run_answers_without_storing(cluster: RunningCluster) -> None:
    dry = _add(cluster, "dry", {"DryRun": "true"})
    assert dry.status_code == 202, dry.text
    summary = dry.json()
    assert (summary["indexUid"], summary["status"], summary["type"]) == (
        "dry",
        "enqueued",
        "documentAdditionOrUpdate",
    )
    assert httpx.get(f"{cluster.url}/tasks/{summary['taskUid']}").status_code == 404
    # Nothing was taken: the next real task gets the same uid, and no index appeared.
    real = _add(cluster, "real")
    assert real.json()["taskUid"] == summary["taskUid"]
    wait_task(cluster, real.json()["taskUid"])
    assert httpx.get(f"{cluster.url}/indexes/dry").status_code == 404
    # A dry run is still validated: a bad payload is refused as usual.
    bad = httpx.post(
        f"{cluster.url}/indexes/dry/documents",
        content=b"[",
        headers={"DryRun": "true", "Content-Type": "application/json"},
    )
    assert bad.status_code == 400 and bad.json()["code"] == "malformed_payload"


def test_dry_run_with_task_id_and_false(cluster: RunningCluster) -> None:
    base = _add(cluster, "both").json()["taskUid"]
    dry = _add(cluster, "both", {"DryRun": "true", "TaskId": str(base + 10)})
    assert dry.json()["taskUid"] == base + 10
    assert _add(cluster, "both", {"DryRun": "false"}).json()["taskUid"] == base + 1
    assert_error(
        _add(cluster, "both", {"DryRun": "maybe"}),
        "bad_request",
        "Invalid `DryRun` header: `maybe` should be `true` or `false`.",
    )


def test_headers_are_ignored_without_the_option() -> None:
    with RunningCluster(shards=1) as plain:
        response = _add(plain, "plain", {"TaskId": "99", "DryRun": "true"})
        assert response.status_code == 202 and response.json()["taskUid"] == 0
        assert wait_task(plain, 0)["status"] == "succeeded"
