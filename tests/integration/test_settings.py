"""Index settings (search.md §6) through the official client, on a real two-shard cluster.

Error cases (codes, statuses, messages) are in ``test_settings_errors.py``.
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

import httpx
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

# The contract's defaults (search.md §6 table), written out rather than imported from the code under test.
DEFAULTS: dict[str, Any] = {
    "displayedAttributes": ["*"],
    "searchableAttributes": ["*"],
    "filterableAttributes": [],
    "sortableAttributes": [],
    "rankingRules": ["words", "typo", "proximity", "attributeRank", "sort", "wordPosition", "exactness"],
    "stopWords": [],
    "nonSeparatorTokens": [],
    "separatorTokens": [],
    "dictionary": [],
    "synonyms": {},
    "distinctAttribute": None,
    "proximityPrecision": "byWord",
    "typoTolerance": {
        "enabled": True,
        "minWordSizeForTypos": {"oneTypo": 5, "twoTypos": 9},
        "disableOnWords": [],
        "disableOnAttributes": [],
        "disableOnNumbers": False,
    },
    "faceting": {"maxValuesPerFacet": 100, "sortFacetValuesBy": {"*": "alpha"}},
    "pagination": {"maxTotalHits": 1000},
    "embedders": {},
    "searchCutoffMs": None,
    "localizedAttributes": None,
    "facetSearch": True,
    "prefixSearch": "indexingTime",
}


class Case(NamedTuple):
    method: str
    """The client's get_/update_/reset_ suffix."""
    path: str
    key: str
    sent: Any
    shown: Any
    """What GET answers afterwards."""
    details: Any
    """What the task's details hold for the key."""


_TYPO_OFF = {**DEFAULTS["typoTolerance"], "enabled": False, "disableOnWords": ["iphone", "xbox"]}
CASES = [
    Case(
        "displayed_attributes",
        "displayed-attributes",
        "displayedAttributes",
        ["title", "year"],
        *[["title", "year"]] * 2,
    ),
    Case(
        "searchable_attributes", "searchable-attributes", "searchableAttributes", ["title", "*"], ["*"], ["*"]
    ),
    Case(
        "filterable_attributes",
        "filterable-attributes",
        "filterableAttributes",
        ["genre", {"attributePatterns": ["year"], "features": {"filter": {"comparison": True}}}],
        *[
            [
                "genre",
                {
                    "attributePatterns": ["year"],
                    "features": {"facetSearch": False, "filter": {"equality": True, "comparison": True}},
                },
            ]
        ]
        * 2,
    ),
    Case(
        "sortable_attributes",
        "sortable-attributes",
        "sortableAttributes",
        ["year", "title", "year"],
        *[["title", "year"]] * 2,
    ),
    Case(
        "ranking_rules",
        "ranking-rules",
        "rankingRules",
        ["words", "year:desc", "typo"],
        *[["words", "year:desc", "typo"]] * 2,
    ),
    Case("stop_words", "stop-words", "stopWords", ["the", "a", "the"], *[["a", "the"]] * 2),
    Case(
        "non_separator_tokens",
        "non-separator-tokens",
        "nonSeparatorTokens",
        ["@", "#", "@"],
        *[["#", "@"]] * 2,
    ),
    Case("separator_tokens", "separator-tokens", "separatorTokens", ["|", "&"], *[["&", "|"]] * 2),
    Case("dictionary", "dictionary", "dictionary", ["J. R. R.", "C++"], *[["C++", "J. R. R."]] * 2),
    Case(
        "synonyms",
        "synonyms",
        "synonyms",
        {"logan": ["xmen", "wolverine", "xmen"]},
        *[{"logan": ["xmen", "wolverine", "xmen"]}] * 2,
    ),
    Case("distinct_attribute", "distinct-attribute", "distinctAttribute", "sku", "sku", "sku"),
    Case(
        "proximity_precision",
        "proximity-precision",
        "proximityPrecision",
        "byAttribute",
        "byAttribute",
        "byAttribute",
    ),
    Case(
        "typo_tolerance",
        "typo-tolerance",
        "typoTolerance",
        {"enabled": False, "disableOnWords": ["xbox", "iphone"]},
        _TYPO_OFF,
        {"enabled": False, "disableOnWords": ["iphone", "xbox"]},
    ),
    Case(
        "faceting_settings",
        "faceting",
        "faceting",
        {"maxValuesPerFacet": 5},
        {"maxValuesPerFacet": 5, "sortFacetValuesBy": {"*": "alpha"}},
        {"maxValuesPerFacet": 5},
    ),
    Case(
        "pagination_settings", "pagination", "pagination", {"maxTotalHits": 50}, *[{"maxTotalHits": 50}] * 2
    ),
    Case(
        "embedders",
        "embedders",
        "embedders",
        {"manual": {"source": "userProvided", "dimensions": 3}},
        *[{"manual": {"source": "userProvided", "dimensions": 3}}] * 2,
    ),
    Case("search_cutoff_ms", "search-cutoff-ms", "searchCutoffMs", 150, 150, 150),
    Case(
        "localized_attributes",
        "localized-attributes",
        "localizedAttributes",
        [{"attributePatterns": ["*_ja"], "locales": ["jpn"]}],
        *[[{"attributePatterns": ["*_ja"], "locales": ["jpn"]}]] * 2,
    ),
    Case("facet_search_settings", "facet-search", "facetSearch", False, False, False),
    Case("prefix_search", "prefix-search", "prefixSearch", "disabled", "disabled", "disabled"),
]


def _succeeded(cluster: RunningCluster, task_uid: int) -> dict[str, Any]:
    task = wait_task(cluster, task_uid)
    assert task["status"] == "succeeded", task
    assert task["type"] == "settingsUpdate"
    return task


def _settings(cluster: RunningCluster, uid: str, path: str = "") -> Any:
    response = httpx.get(f"{cluster.url}/indexes/{uid}/settings{'/' + path if path else ''}")
    assert response.status_code == 200, response.text
    return response.json()


def _plain(value: Any) -> Any:
    """The client's models and enums back to JSON values."""
    if hasattr(value, "model_dump"):
        return value.model_dump(by_alias=True)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def test_the_cases_cover_every_setting() -> None:
    assert [case.key for case in CASES] == list(DEFAULTS)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.path)
def test_sub_route_update_get_and_reset(cluster: RunningCluster, case: Case) -> None:
    uid = f"sub-{case.path}"
    index = client_for(cluster).index(uid)
    task = getattr(index, f"update_{case.method}")(case.sent)
    assert (task.status, task.type, task.index_uid) == ("enqueued", "settingsUpdate", uid)
    assert _succeeded(cluster, task.task_uid)["details"] == {case.key: case.details}
    assert _settings(cluster, uid, case.path) == case.shown
    assert _settings(cluster, uid) == {**DEFAULTS, case.key: case.shown}
    got = getattr(index, f"get_{case.method}")()
    if case.key == "embedders":
        assert got is not None and got.embedders["manual"].dimensions == 3
    else:
        assert _plain(got) == case.shown
    reset = getattr(index, f"reset_{case.method}")()
    assert _succeeded(cluster, reset.task_uid)["details"] == {case.key: None}
    assert _settings(cluster, uid, case.path) == DEFAULTS[case.key]
    assert _settings(cluster, uid) == DEFAULTS


def test_settings_of_a_missing_index_create_it(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    task = client.index("created-by-settings").update_settings({"rankingRules": ["words", "sort"]})
    _succeeded(cluster, task.task_uid)
    index = client.get_index("created-by-settings")
    assert index.primary_key is None
    added = wait_task(
        cluster, client.index("created-by-settings").add_documents([{"product_id": "a1", "t": 1}]).task_uid
    )
    assert added["status"] == "succeeded"
    assert client.get_index("created-by-settings").primary_key == "product_id"
    assert client.index("created-by-settings").get_settings()["rankingRules"] == ["words", "sort"]


def test_whole_settings_patch_merges_and_null_resets(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("whole")
    first = index.update_settings(
        {
            "stopWords": ["the", "a", "the"],
            "displayedAttributes": ["title", "*"],
            "typoTolerance": {"minWordSizeForTypos": {"oneTypo": 3}},
            "faceting": {"sortFacetValuesBy": {"genre": "count"}},
        }
    )
    details = _succeeded(cluster, first.task_uid)["details"]
    assert details == {
        "displayedAttributes": ["*"],
        "stopWords": ["a", "the"],
        "typoTolerance": {"minWordSizeForTypos": {"oneTypo": 3}},
        "faceting": {"sortFacetValuesBy": {"genre": "count"}},
    }
    second = index.update_settings(
        {"stopWords": None, "typoTolerance": {"minWordSizeForTypos": {"twoTypos": 4}}, "searchCutoffMs": 30}
    )
    _succeeded(cluster, second.task_uid)
    settings = index.get_settings()
    assert settings == {
        **DEFAULTS,
        "typoTolerance": {**DEFAULTS["typoTolerance"], "minWordSizeForTypos": {"oneTypo": 3, "twoTypos": 4}},
        "faceting": {"maxValuesPerFacet": 100, "sortFacetValuesBy": {"*": "alpha", "genre": "count"}},
        "searchCutoffMs": 30,
    }
    assert list(settings) == list(DEFAULTS)
    reset = index.reset_settings()
    # The reference's reset names the two experimental settings too: foreignKeys 5th, chat last.
    keys = list(DEFAULTS)
    details = _succeeded(cluster, reset.task_uid)["details"]
    assert list(details) == [*keys[:4], "foreignKeys", *keys[4:], "chat"]
    assert set(details.values()) == {None}
    assert index.get_settings() == DEFAULTS


def test_typo_tolerance_null_resets_all_of_it(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("typo-null")
    typo = {
        "enabled": False,
        "minWordSizeForTypos": {"oneTypo": 1, "twoTypos": 2},
        "disableOnWords": ["w"],
        "disableOnAttributes": ["a"],
        "disableOnNumbers": True,
    }
    _succeeded(cluster, index.update_typo_tolerance(typo).task_uid)
    assert _settings(cluster, "typo-null", "typo-tolerance") == typo
    _succeeded(cluster, index.update_settings({"typoTolerance": None}).task_uid)
    assert _settings(cluster, "typo-null", "typo-tolerance") == DEFAULTS["typoTolerance"]


def test_a_task_failing_on_stored_values_changes_nothing(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("typo-stored")
    _succeeded(
        cluster, index.update_typo_tolerance({"minWordSizeForTypos": {"oneTypo": 2, "twoTypos": 4}}).task_uid
    )
    failed = wait_task(cluster, index.update_typo_tolerance({"minWordSizeForTypos": {"oneTypo": 6}}).task_uid)
    assert failed["status"] == "failed"
    assert failed["details"] == {"typoTolerance": {"minWordSizeForTypos": {"oneTypo": 6}}}
    assert failed["error"] == {
        "message": "Invalid value at `.typoTolerance.minWordSizeForTypos`: `minWordSizeForTypos` setting is "
        "invalid. `oneTypo` and `twoTypos` fields should be between `0` and `255`, and `twoTypos` should be "
        "greater or equals to `oneTypo` but found `oneTypo: 6` and twoTypos: 4`.",
        "code": "invalid_settings_typo_tolerance",
        "type": "invalid_request",
        "link": "https://docs.meilisearch.com/errors#invalid_settings_typo_tolerance",
    }
    assert _settings(cluster, "typo-stored", "typo-tolerance")["minWordSizeForTypos"] == {
        "oneTypo": 2,
        "twoTypos": 4,
    }


def test_resets_never_create_an_index(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    for task in (client.index("never").reset_settings(), client.index("never").reset_stop_words()):
        failed = wait_task(cluster, task.task_uid)
        assert failed["status"] == "failed" and failed["error"]["code"] == "index_not_found"
        assert failed["error"]["message"] == "Index `never` not found."
    assert httpx.get(f"{cluster.url}/indexes/never").status_code == 404


def test_documents_and_settings_live_side_by_side(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    index = client.index("side")
    docs = [{"id": i, "title": f"movie {i}"} for i in range(20)]
    assert wait_task(cluster, index.add_documents(docs).task_uid)["status"] == "succeeded"
    _succeeded(cluster, index.update_sortable_attributes(["title"]).task_uid)
    assert index.get_documents({"limit": 50}).total == 20
    more = wait_task(cluster, index.add_documents([{"id": 99, "title": "x"}]).task_uid)
    assert more["status"] == "succeeded"
    assert index.get_sortable_attributes() == ["title"]
    assert client.get_index("side").primary_key == "id"


def test_clears_batched_with_settings(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("clear-and-settings")
    docs = [{"id": i} for i in range(10)]
    assert wait_task(cluster, index.add_documents(docs).task_uid)["status"] == "succeeded"
    uids = [
        index.update_stop_words(["a"]).task_uid,
        index.delete_all_documents().task_uid,
        index.update_distinct_attribute("id").task_uid,
    ]
    tasks = [wait_task(cluster, uid) for uid in uids]
    assert [t["status"] for t in tasks] == ["succeeded"] * 3
    assert tasks[1]["details"] == {"deletedDocuments": 10}
    assert index.get_documents().total == 0
    settings = index.get_settings()
    assert (settings["stopWords"], settings["distinctAttribute"]) == (["a"], "id")


def test_settings_follow_renames_and_swaps(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    _succeeded(cluster, client.index("swap-a").update_stop_words(["a"]).task_uid)
    _succeeded(cluster, client.index("swap-b").update_stop_words(["b"]).task_uid)
    swap = wait_task(cluster, client.swap_indexes([{"indexes": ["swap-a", "swap-b"]}]).task_uid)
    assert swap["status"] == "succeeded"
    assert (_settings(cluster, "swap-a", "stop-words"), _settings(cluster, "swap-b", "stop-words")) == (
        ["b"],
        ["a"],
    )
    renamed = wait_task(cluster, client.index("swap-a").update(new_uid="swap-c").task_uid)
    assert renamed["status"] == "succeeded"
    assert _settings(cluster, "swap-c", "stop-words") == ["b"]
    assert httpx.get(f"{cluster.url}/indexes/swap-a/settings").json()["code"] == "index_not_found"


def test_deleted_index_loses_its_settings(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    _succeeded(cluster, client.index("gone").update_stop_words(["x"]).task_uid)
    assert wait_task(cluster, client.index("gone").delete().task_uid)["status"] == "succeeded"
    response = httpx.get(f"{cluster.url}/indexes/gone/settings/stop-words")
    assert response.status_code == 404 and response.json()["code"] == "index_not_found"
    _succeeded(cluster, client.index("gone").update_dictionary(["y"]).task_uid)
    assert _settings(cluster, "gone") == {**DEFAULTS, "dictionary": ["y"]}


def test_embedder_api_keys_are_masked(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("masked")
    embedders = {
        "rest": {
            "source": "rest",
            "url": "http://localhost:1/embed",
            "apiKey": "0123456789abcdefghij",
            "request": {"input": "{{text}}"},
            "response": {"embedding": "{{embedding}}"},
        }
    }
    task = wait_task(cluster, index.update_embedders(embedders).task_uid)
    assert task["status"] == "succeeded"
    assert task["details"]["embedders"]["rest"]["apiKey"] == "012XXXXX..."
    assert _settings(cluster, "masked", "embedders")["rest"]["apiKey"] == "012XXXXX..."
    _succeeded(cluster, index.update_embedders({"rest": None}).task_uid)
    assert _settings(cluster, "masked", "embedders") == {}


def test_custom_metadata_is_kept(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("metadata")
    task = index.update_settings({"facetSearch": False}, metadata="release-42")
    done = _succeeded(cluster, task.task_uid)
    assert done["customMetadata"] == "release-42"
