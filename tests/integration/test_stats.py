"""``GET /stats`` and ``GET /indexes/{uid}/stats`` (core.md §3.1, §3.2): every field of the contract's
objects, measured on the real stores and summed over the shards."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

INDEX = "stats-books"
DOCS = [
    {"id": n, "title": f"book number {n}", "tags": ["a", "b"], "_vectors": {"manual": [0.1, 0.2]}}
    for n in range(300)
]
TABLES = {
    "documents",
    "externalIds",
    "indexState",
    "sequences",
    "words",
    "prefixes",
    "stems",
    "impacts",
    "records",
    "settings",
    "facets",
    "shapes",
}
INDEX_FIELDS = [
    "numberOfDocuments",
    "rawDocumentDbSize",
    "avgDocumentSize",
    "isIndexing",
    "numberOfEmbeddings",
    "numberOfEmbeddedDocuments",
    "fieldDistribution",
]
UNITS = ("B", "KiB", "MiB", "GiB")


@pytest.fixture(scope="module")
def index(cluster: RunningCluster) -> str:
    task = client_for(cluster).index(INDEX).add_documents(DOCS, primary_key="id")
    assert wait_task(cluster, task.task_uid)["status"] == "succeeded"
    return INDEX


def _stats(cluster: RunningCluster, path: str, **params: str) -> Any:
    response = httpx.get(f"{cluster.url}{path}", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def _human(size: int) -> str:
    """The reference's human sizes: binary units, at most two decimals, no trailing zeros."""
    amount, unit = float(size), 0
    while amount >= 1024:
        amount, unit = amount / 1024, unit + 1
    return f"{amount:.2f}".rstrip("0").rstrip(".") + " " + UNITS[unit]


@pytest.mark.usefixtures("index")
def test_index_stats_carry_every_field_in_order(cluster: RunningCluster) -> None:
    stats = _stats(cluster, f"/indexes/{INDEX}/stats")
    assert list(stats) == INDEX_FIELDS
    assert (stats["numberOfDocuments"], stats["numberOfEmbeddings"], stats["numberOfEmbeddedDocuments"]) == (
        300,
        0,
        0,
    )
    # a document's own _vectors is no field of it, and no embedding of the index
    assert stats["fieldDistribution"] == {"id": 300, "tags": 300, "title": 300}
    assert stats == _stats(cluster, f"/indexes/{INDEX}/stats", showInternalDatabaseSizes="false")


@pytest.mark.usefixtures("index")
def test_internal_database_sizes_measure_the_index_tables(cluster: RunningCluster) -> None:
    stats = _stats(cluster, f"/indexes/{INDEX}/stats", showInternalDatabaseSizes="true")
    assert list(stats) == [*INDEX_FIELDS[:4], "internalDatabaseSizes", *INDEX_FIELDS[4:]]
    sizes = stats["internalDatabaseSizes"]
    assert set(sizes) <= TABLES
    assert {"documents", "externalIds", "words", "records", "sequences"} <= set(sizes)
    assert all(size > 0 for size in sizes.values()), "empty tables are left out"
    assert list(sizes.values()) == sorted(sizes.values(), reverse=True), "largest first"
    environment = _stats(cluster, "/stats")
    assert sum(sizes.values()) < environment["usedDatabaseSize"] <= environment["databaseSize"]
    human = _stats(cluster, f"/indexes/{INDEX}/stats", showInternalDatabaseSizes="true", sizeFormat="human")
    assert human["internalDatabaseSizes"] == {name: _human(size) for name, size in sizes.items()}
    assert human["rawDocumentDbSize"] == _human(stats["rawDocumentDbSize"])


def test_sizes_follow_the_data(cluster: RunningCluster) -> None:
    """More documents take more bytes in their tables; none leave the document tables out."""
    index = client_for(cluster).index("stats-growth")
    tables = ("documents", "externalIds", "words", "records", "sequences")
    wait_task(cluster, index.add_documents([{"id": n, "t": f"first words {n}"} for n in range(50)]).task_uid)
    sizes = _stats(cluster, "/indexes/stats-growth/stats", showInternalDatabaseSizes="true")
    more = [{"id": 1000 + n, "t": f"another long title {n}"} for n in range(200)]
    wait_task(cluster, index.add_documents(more).task_uid)
    grown = _stats(cluster, "/indexes/stats-growth/stats", showInternalDatabaseSizes="true")
    for table in tables:
        assert grown["internalDatabaseSizes"][table] > sizes["internalDatabaseSizes"][table], table
    wait_task(cluster, index.delete_all_documents().task_uid)
    emptied = _stats(cluster, "/indexes/stats-growth/stats", showInternalDatabaseSizes="true")
    assert emptied["numberOfDocuments"] == 0
    assert not set(emptied.get("internalDatabaseSizes", {})) & set(tables)


@pytest.mark.usefixtures("index")
def test_global_stats_show_used_size_and_each_index_sizes(cluster: RunningCluster) -> None:
    plain = _stats(cluster, "/stats")
    assert list(plain) == ["databaseSize", "usedDatabaseSize", "lastUpdate", "indexes"]
    assert 0 < plain["usedDatabaseSize"] <= plain["databaseSize"]
    assert "internalDatabaseSizes" not in plain["indexes"][INDEX]
    detailed = _stats(cluster, "/stats", showInternalDatabaseSizes="true")
    assert "documents" in detailed["indexes"][INDEX]["internalDatabaseSizes"]
    human = _stats(cluster, "/stats", sizeFormat="human")
    assert human["usedDatabaseSize"].split(" ")[1] in UNITS


def test_stats_parameters_are_validated(cluster: RunningCluster) -> None:
    cases = [
        (
            {"showInternalDatabaseSizes": "maybe"},
            "invalid_stats_show_internal_database_sizes",
            "Invalid value in parameter `showInternalDatabaseSizes`: could not parse `maybe` as a boolean, "
            "expected either `true` or `false`",
        ),
        (
            {"sizeFormat": "kb"},
            "invalid_stats_size_format",
            "Unknown value `kb` for parameter `sizeFormat`: expected one of `human`, `raw`",
        ),
    ]
    for path in ("/stats", f"/indexes/{INDEX}/stats"):
        for params, code, message in cases:
            response = httpx.get(f"{cluster.url}{path}", params=params)
            assert response.status_code == 400
            assert response.json()["code"] == code
            assert response.json()["type"] == "invalid_request"
            assert response.json()["message"] == message
