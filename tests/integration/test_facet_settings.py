"""Changing ``filterableAttributes`` (search.md §6, §6.3) keeps facet data exact, on 1 and 3 shards.

A change rebuilds only the fields it faces: newly faceted fields are built, fields no longer faceted
are dropped, a features-only change touches nothing. Whatever was kept or built, distributions,
filters and facet search must equal what is computed here from the documents as they are now
(documents are added and deleted between changes, so stale or doubled values would show).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.facet_support import expected_facets, normalise
from tests.integration.search_support import make_index, search, search_raw, update_settings
from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

COLORS = ["Red", "red", "Blue", "Grün", "grun", "Yellow"]


def _docs(first: int, count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for i in range(first, first + count):
        doc: dict[str, Any] = {"id": i, "color": rng.choice(COLORS), "size": rng.randint(1, 6)}
        if rng.random() < 0.6:
            doc["meta"] = {"shop": rng.choice(["North", "south", "South"]), "stock": rng.randint(0, 3)}
        if rng.random() < 0.3:
            doc["tags"] = rng.sample(["a", "b", "c", "d"], 2)
        docs.append(doc)
    return docs


FIELDS = ["color", "size", "meta.shop", "meta.stock", "tags"]


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[RunningCluster, RunningCluster]]:
    with RunningCluster(shards=1) as one, RunningCluster(shards=3) as three:
        yield one, three


def _filterable(cluster: RunningCluster, uid: str, rules: list[Any]) -> None:
    update_settings(cluster, uid, {"filterableAttributes": rules})


def _check(
    clusters: tuple[RunningCluster, RunningCluster], uid: str, docs: list[dict[str, Any]], fields: list[str]
) -> None:
    """Every field of ``fields`` facets exactly ``docs``; every other one of ``FIELDS`` is refused."""
    for cluster in clusters:
        if fields:
            body = search(cluster, uid, facets=fields, limit=0)
            expected = {field: expected_facets(docs, field)[0] for field in fields}
            assert body["facetDistribution"] == expected, fields
            for field in fields:
                value = next(iter(expected[field]))
                operand = value if value.lstrip("-").isdigit() else f"'{value}'"
                filtered = search(cluster, uid, filter=f"{field} = {operand}", limit=0)
                assert filtered["estimatedTotalHits"] == expected[field][value], (field, value)
        for field in set(FIELDS) - set(fields):
            response = search_raw(cluster, uid, filter=f"{field} EXISTS")
            assert response.status_code == 400, (field, response.text)
            assert response.json()["code"] == "invalid_search_filter"


def _add(cluster: RunningCluster, uid: str, docs: list[dict[str, Any]]) -> None:
    task = wait_task(cluster, client_for(cluster).index(uid).add_documents(docs).task_uid)
    assert task["status"] == "succeeded", task


def _delete(cluster: RunningCluster, uid: str, ids: list[int]) -> None:
    task = wait_task(cluster, client_for(cluster).index(uid).delete_documents(ids).task_uid)
    assert task["status"] == "succeeded", task


def test_filterable_changes_keep_facets_exact(clusters: tuple[RunningCluster, RunningCluster]) -> None:
    docs = _docs(0, 120, 3)
    for cluster in clusters:
        make_index(cluster, "changes", docs, {"filterableAttributes": ["color"]})
    _check(clusters, "changes", docs, ["color"])

    # a field and a nested object newly faceted: built from the stored documents
    for cluster in clusters:
        _filterable(cluster, "changes", ["color", "meta", "size"])
    _check(clusters, "changes", docs, ["color", "meta.shop", "meta.stock", "size"])

    # documents come and go while the fields stay faceted
    more = _docs(120, 40, 4)
    docs = [doc for doc in docs if doc["id"] % 7] + more
    for cluster in clusters:
        _add(cluster, "changes", more)
        _delete(cluster, "changes", [i for i in range(120) if i % 7 == 0])
    _check(clusters, "changes", docs, ["color", "meta.shop", "meta.stock", "size"])

    # features only (facet search on, comparison on): the same fields are faceted
    rules: list[Any] = [
        {"attributePatterns": ["color"], "features": {"facetSearch": True, "filter": {"comparison": True}}},
        "meta",
        "size",
    ]
    for cluster in clusters:
        _filterable(cluster, "changes", rules)
    _check(clusters, "changes", docs, ["color", "meta.shop", "meta.stock", "size"])
    for cluster in clusters:
        hits = httpx.post(
            f"{cluster.url}/indexes/changes/facet-search", json={"facetName": "color", "facetQuery": "r"}
        ).json()["facetHits"]
        shown, _ = expected_facets(docs, "color")
        assert hits == [{"value": v, "count": c} for v, c in shown.items() if normalise(v).startswith("r")]

    # a rule removed and one narrowed: their fields are dropped; then documents change under them
    for cluster in clusters:
        _filterable(cluster, "changes", [rules[0], "meta.stock"])
    _check(clusters, "changes", docs, ["color", "meta.stock"])
    removed = [doc["id"] for doc in docs[:30:3]]
    docs = [doc for doc in docs if doc["id"] not in removed]
    for cluster in clusters:
        _delete(cluster, "changes", removed)

    # faceted again: rebuilt from the documents as they are now, nothing left over from before
    for cluster in clusters:
        _filterable(cluster, "changes", ["tags", "size", "meta", "color"])
    _check(clusters, "changes", docs, ["color", "meta.shop", "meta.stock", "size", "tags"])

    # an unfaceted rule shadowing a later one drops its fields
    shadow: list[Any] = [
        {"attributePatterns": ["size"], "features": {"filter": {"equality": False}}},
        "size",
        "color",
    ]
    for cluster in clusters:
        _filterable(cluster, "changes", shadow)
    _check(clusters, "changes", docs, ["color"])


def test_sortable_field_keeps_its_values_when_no_longer_filterable(
    clusters: tuple[RunningCluster, RunningCluster],
) -> None:
    docs = _docs(0, 60, 9)
    settings = {"filterableAttributes": ["size", "color"], "sortableAttributes": ["size"]}
    for cluster in clusters:
        make_index(cluster, "sorted", docs, settings)
        _filterable(cluster, "sorted", ["color"])
    expected = [doc["id"] for doc in sorted(docs, key=lambda doc: (-doc["size"], doc["id"]))]
    for cluster in clusters:
        body = search(cluster, "sorted", sort=["size:desc"], limit=100)
        assert [hit["id"] for hit in body["hits"]] == expected
    _check(clusters, "sorted", docs, ["color"])
    for cluster in clusters:
        _filterable(cluster, "sorted", ["color", "size"])
    _check(clusters, "sorted", docs, ["color", "size"])
