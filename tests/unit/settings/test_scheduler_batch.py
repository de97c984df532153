"""The scheduler's settings batches: merge in order, fail tasks alone, one shard operation per shard."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from common.settings import SETTINGS_KEYS, effective_settings, reset_all, validate_setting, validate_settings
from scheduler.settings import Operations, run_settings_batch
from scheduler.store import SchedulerStore
from scheduler.tasks import Outcome


class _Shards:
    """Records what would be dispatched and answers the counts shards report for clears."""

    def __init__(self, deleted: int = 0, invalid: dict[str, Any] | None = None) -> None:
        self.sent: list[Operations] = []
        self.deleted = deleted
        self.invalid = invalid
        """The error the shards report for a stored document when asked (``CheckDocuments``)."""
        self.checks: list[dict[str, Any]] = []

    async def first_invalid(self, request: dict[str, Any]) -> dict[str, Any] | None:
        self.checks.append(request)
        return self.invalid

    async def dispatch(self, operations: Operations) -> dict[str, dict[str, int]]:
        self.sent.append(operations)
        return {
            str(op["task"]): {"deletedDocuments": self.deleted * len(operations)}
            for op in operations[0]
            if op["op"] == "clearDocuments"
        }


@pytest.fixture
def store(tmp_path: Path) -> SchedulerStore:
    return SchedulerStore(tmp_path / "scheduler")


def _settings_task(uid: int, update: dict[str, Any], creates: bool = True) -> dict[str, Any]:
    params = {"settings": update, "allowIndexCreation": creates}
    return {"uid": uid, "type": "settingsUpdate", "indexUid": "movies", "params": params}


def _clear(uid: int) -> dict[str, Any]:
    return {"uid": uid, "type": "documentDeletion", "indexUid": "movies", "params": {"kind": "clear"}}


def _run(
    store: SchedulerStore, tasks: list[dict[str, Any]], shards: _Shards, count: int = 2
) -> tuple[dict[int, Outcome], list[tuple[str, Any]]]:
    return asyncio.run(run_settings_batch(store, tasks, count, shards.dispatch, shards.first_invalid))


def _put_index(store: SchedulerStore, **fields: Any) -> None:
    with store.write() as txn:
        txn.put_index({"uid": "movies", "createdNs": 1, "updatedNs": 1, "primaryKey": "id", **fields})


def test_a_missing_index_is_created_with_the_merged_settings(store: SchedulerStore) -> None:
    shards = _Shards()
    tasks = [
        _settings_task(3, validate_settings({"stopWords": ["b", "a"], "rankingRules": ["words"]})),
        _settings_task(4, validate_setting("stopWords", ["c"])),
    ]
    results, changes = _run(store, tasks, shards, count=3)
    assert {uid: r.status for uid, r in results.items()} == {3: "succeeded", 4: "succeeded"}
    expected = effective_settings({"stopWords": ["c"], "rankingRules": ["words"]})
    operation = {"op": "updateSettings", "task": 4, "index": "movies", "settings": expected}
    assert shards.sent == [[[operation]] * 3]
    assert list(shards.sent[0][0][0]["settings"]) == list(SETTINGS_KEYS)
    [(change, record)] = changes
    assert change == "put"
    assert record["settings"] == {"stopWords": ["c"], "rankingRules": ["words"]}
    assert record["uid"] == "movies" and record["primaryKey"] is None
    assert record["createdNs"] == record["updatedNs"]
    assert store.get_index("movies") is None, "the catalog changes only in the executor's commit"


def test_stored_settings_are_the_base_and_other_record_fields_are_kept(store: SchedulerStore) -> None:
    _put_index(
        store, settings={"stopWords": ["x"], "typoTolerance": {"minWordSizeForTypos": {"twoTypos": 4}}}
    )
    shards = _Shards()
    tasks = [_settings_task(7, validate_settings({"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 3}}}))]
    results, [(_, record)] = _run(store, tasks, shards)
    assert results[7].status == "succeeded"
    assert record["settings"] == {
        "stopWords": ["x"],
        "typoTolerance": {"minWordSizeForTypos": {"twoTypos": 4, "oneTypo": 3}},
    }
    assert (record["primaryKey"], record["createdNs"]) == ("id", 1) and record["updatedNs"] > 1


def test_a_task_failing_its_merge_fails_alone(store: SchedulerStore) -> None:
    stored = {"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 2, "twoTypos": 4}}}
    _put_index(store, settings=stored)
    shards = _Shards()
    tasks = [
        _settings_task(1, validate_settings({"stopWords": ["a"]})),
        _settings_task(2, validate_settings({"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 6}}})),
        _settings_task(3, validate_settings({"distinctAttribute": "sku"})),
    ]
    results, [(_, record)] = _run(store, tasks, shards)
    assert [results[uid].status for uid in (1, 2, 3)] == ["succeeded", "failed", "succeeded"]
    error = results[2].error
    assert error is not None and error["code"] == "invalid_settings_typo_tolerance"
    assert "found `oneTypo: 6` and twoTypos: 4`" in error["message"]
    assert record["settings"] == {**stored, "stopWords": ["a"], "distinctAttribute": "sku"}
    [[[operation], _]] = shards.sent
    assert operation["task"] == 3 and operation["settings"]["distinctAttribute"] == "sku"


def test_when_every_task_fails_nothing_is_sent_or_stored(store: SchedulerStore) -> None:
    shards = _Shards()
    tasks = [
        _settings_task(1, validate_settings({"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 99}}}))
    ]
    results, changes = _run(store, tasks, shards)
    assert results[1].status == "failed" and changes == [] and shards.sent == []


def test_resets_never_create_the_index(store: SchedulerStore) -> None:
    shards = _Shards()
    tasks = [
        _settings_task(1, reset_all(), creates=False),
        _settings_task(2, {"stopWords": None}, creates=False),
    ]
    results, changes = _run(store, tasks, shards)
    for uid in (1, 2):
        assert results[uid].error == {
            "message": "Index `movies` not found.",
            "code": "index_not_found",
            "type": "invalid_request",
            "link": "https://docs.meilisearch.com/errors#index_not_found",
        }
    assert changes == [] and shards.sent == []


def test_a_reset_after_a_creating_update_in_the_same_batch_applies(store: SchedulerStore) -> None:
    shards = _Shards()
    tasks = [
        _settings_task(1, reset_all(), creates=False),
        _settings_task(2, validate_settings({"stopWords": ["a"], "facetSearch": False})),
        _settings_task(3, {"stopWords": None}, creates=False),
    ]
    results, [(_, record)] = _run(store, tasks, shards)
    assert [results[uid].status for uid in (1, 2, 3)] == ["failed", "succeeded", "succeeded"]
    assert record["settings"] == {"facetSearch": False}
    assert shards.sent[0][0][0]["task"] == 3


def test_clears_run_before_the_settings_and_report_their_counts(store: SchedulerStore) -> None:
    _put_index(store)
    shards = _Shards(deleted=5)
    tasks = [_clear(1), _settings_task(2, validate_settings({"stopWords": ["a"]})), _clear(3)]
    results, [(_, record)] = _run(store, tasks, shards)
    [per_shard] = shards.sent
    assert [[op["op"] for op in ops] for ops in per_shard] == [
        ["clearDocuments", "clearDocuments", "updateSettings"]
    ] * 2
    assert [op.get("task") for op in per_shard[0]] == [1, 3, 2]
    assert results[1].counts == {"deletedDocuments": 10} and results[3].counts == {"deletedDocuments": 10}
    assert results[2].status == "succeeded" and record["settings"] == {"stopWords": ["a"]}


def test_a_clear_of_a_missing_index_fails_unless_created_earlier_in_the_batch(store: SchedulerStore) -> None:
    shards = _Shards()
    tasks = [_clear(1), _settings_task(2, validate_settings({"stopWords": ["a"]})), _clear(3)]
    results, changes = _run(store, tasks, shards)
    assert results[1].error is not None and results[1].error["code"] == "index_not_found"
    assert results[2].status == results[3].status == "succeeded"
    assert results[3].counts == {"deletedDocuments": 0}
    assert [op["op"] for op in shards.sent[0][0]] == ["clearDocuments", "updateSettings"]
    assert changes[0][1]["settings"] == {"stopWords": ["a"]}


def test_clears_alone_still_touch_the_index(store: SchedulerStore) -> None:
    _put_index(store, settings={"stopWords": ["keep"]})
    shards = _Shards(deleted=1)
    failing = _settings_task(
        2, validate_settings({"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 99}}})
    )
    results, [(_, record)] = _run(store, [_clear(1), failing], shards)
    assert results[1].counts == {"deletedDocuments": 2} and results[2].status == "failed"
    assert [op["op"] for op in shards.sent[0][0]] == ["clearDocuments"]
    assert record["settings"] == {"stopWords": ["keep"]} and record["updatedNs"] > 1


GEO_ERROR = {"message": "Index `movies`: ...", "code": "invalid_document_geo_field"}


def test_starting_to_use_geo_asks_the_shards_and_a_bad_document_fails_every_settings_task(
    store: SchedulerStore,
) -> None:
    _put_index(store, settings={"filterableAttributes": ["genre"]})
    shards = _Shards(invalid=GEO_ERROR)
    tasks = [
        _settings_task(1, validate_settings({"stopWords": ["a"]})),
        _settings_task(2, validate_settings({"sortableAttributes": ["_geo"]})),
        _settings_task(3, validate_settings({"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 99}}})),
        _settings_task(4, validate_settings({"filterableAttributes": ["genre", "_geojson"]})),
    ]
    results, changes = _run(store, tasks, shards)
    assert shards.checks == [{"index": "movies", "primaryKey": "id", "geo": True, "geojson": True}]
    assert [results[uid].status for uid in (1, 2, 3, 4)] == ["failed"] * 4
    assert results[1].error == GEO_ERROR and results[4].error == GEO_ERROR
    assert results[3].error is not None and results[3].error["code"] == "invalid_settings_typo_tolerance"
    assert changes == [] and shards.sent == []


def test_geo_already_in_use_is_not_checked_again(store: SchedulerStore) -> None:
    _put_index(store, settings={"filterableAttributes": ["_geo", "_geojson"]})
    shards = _Shards(invalid=GEO_ERROR)
    tasks = [_settings_task(1, validate_settings({"sortableAttributes": ["_geo"]}))]
    results, [(_, record)] = _run(store, tasks, shards)
    assert results[1].status == "succeeded" and shards.checks == []
    assert record["settings"]["sortableAttributes"] == ["_geo"]


@pytest.mark.parametrize("with_clear", [True, False])
def test_no_check_without_stored_documents(store: SchedulerStore, with_clear: bool) -> None:
    """A clear in the batch runs first; a new index has no documents."""
    if with_clear:
        _put_index(store, settings={})
    shards = _Shards(invalid=GEO_ERROR)
    geo = _settings_task(2, validate_settings({"filterableAttributes": ["_geo"]}))
    tasks = [_clear(1), geo] if with_clear else [geo]
    results, _ = _run(store, tasks, shards)
    assert results[2].status == "succeeded" and shards.checks == []
