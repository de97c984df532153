"""``GET/PATCH /experimental-features`` (core.md §3.11) and the filter gates they switch (search.md §4.3).

Expectations come from the contract: the field list and order, PATCH semantics, the ``bad_request`` wording
of an unknown field, ``feature_not_enabled`` for CONTAINS and ``_vectors`` filters; and from issue 6:
CONTAINS is on with the launch flag or the runtime feature.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from typing import Any

import httpx
import meilisearch
import pytest

from tests.integration.search_support import assert_error, make_index, search_raw
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

FIELDS = [
    "metrics", "logsRoute", "editDocumentsByFunction", "containsFilter", "dynamicSearchRules", "network",
    "getTaskDocumentsRoute", "taskQueueCompactionRoute", "compositeEmbedders", "chatCompletions",
    "multimodal", "foreignKeys", "disableDocumentsFetchQueue", "legacySearch", "renderRoute",
]  # fmt: skip
DEFAULTS: dict[str, Any] = {name: None if name == "legacySearch" else False for name in FIELDS}
DOCS = [
    {"id": 1, "title": "Café Society"},
    {"id": 2, "title": "Taxi Driver"},
    {"id": 3, "title": "Le Café des Artistes"},
    {"id": 4, "title": "Heat"},
]
CONTAINS = "title CONTAINS café"
CONTAINS_REFUSED = "Using `CONTAINS` in a filter requires enabling the `contains filter` experimental feature"
VECTORS_REFUSED = "Using a vector filter requires enabling the `multimodal` experimental feature"
PATH = "/experimental-features"


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster(shards=2) as running:
        make_index(running, "movies", DOCS, {"filterableAttributes": ["title"]})
        yield running


@pytest.fixture
def client(cluster: RunningCluster) -> Iterator[meilisearch.Client]:
    """The official client; every feature is back to its default after the test (``legacySearch``, which
    cannot return to null, is left unset by this module's tests)."""
    client = client_for(cluster)
    yield client
    reset = {name: False for name in FIELDS if name != "legacySearch"}
    assert client.update_experimental_features(reset)["containsFilter"] is False


def _patch(cluster: RunningCluster, body: Any) -> httpx.Response:
    return httpx.patch(f"{cluster.url}{PATH}", json=body, timeout=30)


def _fetch(cluster: RunningCluster, filter_: str) -> httpx.Response:
    return httpx.post(f"{cluster.url}/indexes/movies/documents/fetch", json={"filter": filter_}, timeout=30)


def _ids(results: list[dict[str, Any]]) -> list[int]:
    return sorted(document["id"] for document in results)


def _assert_contains_refused(cluster: RunningCluster) -> None:
    listed = httpx.get(f"{cluster.url}/indexes/movies/documents", params={"filter": CONTAINS}, timeout=30)
    for response in (search_raw(cluster, "movies", filter=CONTAINS), _fetch(cluster, CONTAINS), listed):
        assert_error(response, "feature_not_enabled", prefix=CONTAINS_REFUSED)


def _assert_contains_accepted(cluster: RunningCluster) -> None:
    hits = search_raw(cluster, "movies", filter=CONTAINS)
    assert hits.status_code == 200, hits.text
    assert _ids(hits.json()["hits"]) == [1, 3]
    fetched = _fetch(cluster, CONTAINS)
    assert fetched.status_code == 200, fetched.text
    assert _ids(fetched.json()["results"]) == [1, 3]


def test_get_lists_every_feature_in_contract_order_with_defaults(
    cluster: RunningCluster, client: meilisearch.Client
) -> None:
    features = client.get_experimental_features()
    assert list(features) == FIELDS
    assert features == DEFAULTS
    raw = httpx.get(f"{cluster.url}{PATH}", timeout=30)
    assert raw.status_code == 200 and list(raw.json()) == FIELDS


def test_patch_changes_a_subset_and_null_keeps_a_value(
    cluster: RunningCluster, client: meilisearch.Client
) -> None:
    after = client.update_experimental_features({"metrics": True, "network": True})
    assert list(after) == FIELDS
    assert after == {**DEFAULTS, "metrics": True, "network": True}
    response = _patch(cluster, {"metrics": None, "network": False, "legacySearch": None})
    assert response.status_code == 200, response.text
    assert response.json() == {**DEFAULTS, "metrics": True}
    assert _patch(cluster, {}).json() == {**DEFAULTS, "metrics": True}
    assert client.get_experimental_features() == {**DEFAULTS, "metrics": True}


def test_unknown_field_and_wrong_type_are_refused_and_change_nothing(
    cluster: RunningCluster, client: meilisearch.Client
) -> None:
    before = client.get_experimental_features()
    expected = ", ".join(f"`{name}`" for name in FIELDS)
    assert_error(
        _patch(cluster, {"metrics": True, "NotAFeature": True}),
        "bad_request",
        f"Unknown field `NotAFeature`: expected one of {expected}",
    )
    assert_error(
        _patch(cluster, {"containsFilter": "yes"}),
        "bad_request",
        'Invalid value type at `.containsFilter`: expected a boolean, but found a string: `"yes"`',
    )
    assert_error(_patch(cluster, [True]), "bad_request", prefix="Invalid value type: expected an object")
    with pytest.raises(meilisearch.errors.MeilisearchApiError) as refused:
        client.update_experimental_features({"tasksStreamingRoute": True})  # newer than the contract
    assert refused.value.code == "bad_request"
    assert client.get_experimental_features() == before


def test_contains_follows_the_runtime_feature(cluster: RunningCluster, client: meilisearch.Client) -> None:
    _assert_contains_refused(cluster)
    assert client.update_experimental_features({"containsFilter": True})["containsFilter"] is True
    _assert_contains_accepted(cluster)
    multi = httpx.post(
        f"{cluster.url}/multi-search",
        json={"queries": [{"indexUid": "movies", "filter": "title NOT CONTAINS café"}]},
        timeout=30,
    )
    assert multi.status_code == 200, multi.text
    assert _ids(multi.json()["results"][0]["hits"]) == [2, 4]
    assert client.update_experimental_features({"containsFilter": False})["containsFilter"] is False
    _assert_contains_refused(cluster)


def test_delete_by_filter_uses_the_feature_as_it_was_at_registration(
    cluster: RunningCluster, client: meilisearch.Client
) -> None:
    make_index(cluster, "deletions", DOCS, {"filterableAttributes": ["title"]})
    index = client.index("deletions")
    refused = wait_task(cluster, index.delete_documents(filter="title CONTAINS taxi").task_uid)
    assert refused["status"] == "failed" and refused["error"]["code"] == "feature_not_enabled", refused
    client.update_experimental_features({"containsFilter": True})
    deleted = wait_task(cluster, index.delete_documents(filter="title CONTAINS taxi").task_uid)
    assert deleted["status"] == "succeeded" and deleted["details"]["deletedDocuments"] == 1, deleted
    assert _ids(_documents(cluster, "deletions")) == [1, 3, 4]


def _documents(cluster: RunningCluster, uid: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{cluster.url}/indexes/{uid}/documents", timeout=30)
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    return results


def test_vector_filters_need_multimodal(cluster: RunningCluster, client: meilisearch.Client) -> None:
    refused = search_raw(cluster, "movies", filter="_vectors EXISTS")
    assert_error(refused, "feature_not_enabled", prefix=VECTORS_REFUSED)
    client.update_experimental_features({"multimodal": True})
    past_the_gate = search_raw(cluster, "movies", filter="_vectors EXISTS")
    assert past_the_gate.json().get("code") != "feature_not_enabled", past_the_gate.text


def test_launch_flag_enables_contains_whatever_the_runtime_value() -> None:
    with RunningCluster("--experimental-contains-filter", shards=1) as running:
        make_index(running, "movies", DOCS, {"filterableAttributes": ["title"]})
        assert client_for(running).get_experimental_features()["containsFilter"] is False
        _assert_contains_accepted(running)
        assert _patch(running, {"containsFilter": False}).status_code == 200
        _assert_contains_accepted(running)


def test_features_survive_kill_9_and_a_restart(tmp_path_factory: pytest.TempPathFactory) -> None:
    data_dir = tmp_path_factory.mktemp("features") / "data.ms"
    changed = {**DEFAULTS, "containsFilter": True, "legacySearch": False, "metrics": True}
    with RunningCluster(shards=2, data_dir=data_dir) as running:
        make_index(running, "movies", DOCS, {"filterableAttributes": ["title"]})
        client = client_for(running)
        assert _patch(running, {"legacySearch": None}).json()["legacySearch"] is None  # null until set
        assert client.update_experimental_features({"containsFilter": True, "legacySearch": False}) == {
            **changed,
            "metrics": False,
        }
        assert _patch(running, {"metrics": True, "legacySearch": None}).json() == changed
        pids = running.child_pids()
        running.kill_backend("scheduler")  # right after the 200: the change must already be on disk
        running.wait_replaced("scheduler", pids["scheduler"])
        os.kill(pids["gateway"], signal.SIGKILL)
        running.wait_replaced("gateway", pids["gateway"])  # the new gateway loads the scheduler's record
        assert client.get_experimental_features() == changed
        _assert_contains_accepted(running)
    with RunningCluster(shards=2, data_dir=data_dir) as restarted:
        assert client_for(restarted).get_experimental_features() == changed
        _assert_contains_accepted(restarted)
        assert _patch(restarted, {"containsFilter": False}).json()["containsFilter"] is False
        _assert_contains_refused(restarted)
