"""``POST /indexes/{uid}/fields`` (core.md §3.15): the field listing, its filter, pagination and errors.

Expected entries, orders and messages are the reference engine's answers to the same requests.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

DOCUMENTS = [
    {
        "id": 1,
        "title": "A",
        "genre": "g",
        "year": 2000,
        "nested": {"a": 1, "b": {"c": "x"}},
        "fr": "bonjour",
        "arr": [{"k": 1}, {"k2": 2}],
        "_geo": {"lat": 1, "lng": 2},
        "_geojson": {"type": "Point", "coordinates": [2, 1]},
        "Upper": None,
    },
    {"id": 2, "deep": [[{"z": 1}]], "nested": {"d": 4}},
]
SETTINGS = {
    "filterableAttributes": [
        "genre",
        {
            "attributePatterns": ["year", "nested.*"],
            "features": {"facetSearch": True, "filter": {"equality": True, "comparison": True}},
        },
        {"attributePatterns": ["title"], "features": {"facetSearch": False, "filter": {"equality": False}}},
        {"attributePatterns": ["fr"], "features": {"facetSearch": True, "filter": {"equality": False}}},
        "_geo",
    ],
    "sortableAttributes": ["year", "nested"],
    "searchableAttributes": ["title", "nested", "_geo", "id"],
    "displayedAttributes": ["title", "genre", "nested.a", "_geo"],
    "distinctAttribute": "genre",
    "rankingRules": ["words", "year:desc", "title:asc"],
    "localizedAttributes": [
        {"attributePatterns": ["fr", "nested.*"], "locales": ["fra", "en"]},
        {"attributePatterns": ["*e"], "locales": ["zh"]},
    ],
    "faceting": {"sortFacetValuesBy": {"*": "count", "genre": "alpha", "nested.*": "alpha"}},
}
NAMES = [
    "Upper", "_geo", "_geo.lat", "_geo.lng", "_geojson", "arr", "arr.k", "arr.k2", "deep", "deep.z",
    "fr", "genre", "id", "nested", "nested.a", "nested.b", "nested.b.c", "nested.d", "title", "year",
]  # fmt: skip


def _entry(name: str, flags: str, filterable: tuple[int, ...] = (0, 0, 0), **extra: Any) -> dict[str, Any]:
    """``flags``: D displayed, S searchable, O sortable, X distinct; ``filterable``: its three features."""
    facet_search, equality, comparison = (bool(f) for f in filterable)
    return {
        "name": name,
        "displayed": {"enabled": "D" in flags},
        "searchable": {"enabled": "S" in flags},
        "sortable": {"enabled": "O" in flags},
        "distinct": {"enabled": "X" in flags},
        "rankingRule": extra.get("rankingRule", {"enabled": False}),
        "filterable": {
            "enabled": facet_search or equality or comparison,
            "sortBy": extra.get("sortBy", "count"),
            "facetSearch": facet_search,
            "equality": equality,
            "comparison": comparison,
        },
        "localized": {"locales": extra.get("locales", [])},
    }


EXPECTED = {
    "Upper": _entry("Upper", ""),
    "_geo": _entry("_geo", "D", (1, 1, 1)),
    "_geo.lat": _entry("_geo.lat", "D", (1, 1, 1)),
    "genre": _entry("genre", "DX", (1, 1, 1), sortBy="alpha", locales=["Zho"]),
    "nested": _entry("nested", "SO"),
    "nested.a": _entry("nested.a", "DSO", (1, 1, 1), locales=["Fra", "Eng"]),
    "nested.b.c": _entry("nested.b.c", "SO", (1, 1, 1), locales=["Fra", "Eng"]),
    "title": _entry("title", "DS", rankingRule={"enabled": True, "order": "asc"}, locales=["Zho"]),
    "year": _entry("year", "O", (1, 1, 1), rankingRule={"enabled": True, "order": "desc"}),
    "fr": _entry("fr", "", (1, 0, 0), locales=["Fra", "Eng"]),
    "id": _entry("id", "S"),
    "arr.k": _entry("arr.k", ""),
}


@pytest.fixture(scope="module")
def books(cluster: RunningCluster) -> str:
    index = client_for(cluster).index("fields_books")
    wait_task(cluster, index.add_documents(DOCUMENTS).task_uid)
    done = wait_task(cluster, index.update_settings(SETTINGS).task_uid)
    assert done["status"] == "succeeded", done
    return "fields_books"


def _fields(cluster: RunningCluster, uid: str, body: Any) -> httpx.Response:
    return httpx.post(f"{cluster.url}/indexes/{uid}/fields", json=body)


def test_every_path_is_listed_sorted_with_its_capabilities(cluster: RunningCluster, books: str) -> None:
    page = client_for(cluster).index(books).get_fields(limit=100)
    raw = _fields(cluster, books, {"limit": 100}).json()
    assert list(raw) == ["results", "offset", "limit", "total"]
    assert [entry["name"] for entry in raw["results"]] == NAMES
    assert (raw["offset"], raw["limit"], raw["total"]) == (0, 100, len(NAMES))
    by_name = {entry["name"]: entry for entry in raw["results"]}
    for name, expected in EXPECTED.items():
        assert by_name[name] == expected, name
    assert list(by_name["year"]) == list(EXPECTED["year"])
    assert [entry["name"] for entry in page.results] == NAMES


NESTED = ["nested", "nested.a", "nested.b", "nested.b.c", "nested.d"]
ARR, DEEP = ["arr", "arr.k", "arr.k2"], ["deep", "deep.z"]


@pytest.mark.parametrize(
    ("criteria", "names"),
    [
        ({"attributePatterns": ["nested"]}, ["nested"]),
        ({"attributePatterns": ["nested.*", "_geo"]}, ["_geo", *NESTED[1:]]),
        ({"attributePatterns": ["*e*"], "sortable": True}, [*NESTED, "year"]),
        ({"attributePatterns": []}, []),
        ({"rankingRule": True}, ["title", "year"]),
        ({"distinct": True}, ["genre"]),
        ({"displayed": True, "searchable": True}, ["nested.a", "title"]),
        ({"filterable": True, "displayed": False}, ["fr", "nested.b", "nested.b.c", "nested.d", "year"]),
        ({"filterable": False, "searchable": False, "displayed": False}, ["Upper", "_geojson", *ARR, *DEEP]),
        ({"displayed": None, "attributePatterns": None}, NAMES),
    ],
)  # fmt: skip
def test_filter_criteria_are_anded(
    cluster: RunningCluster, books: str, criteria: dict[str, Any], names: list[str]
) -> None:
    body = _fields(cluster, books, {"filter": criteria, "limit": 100}).json()
    assert [entry["name"] for entry in body["results"]] == names
    assert body["total"] == len(names)


def test_pagination(cluster: RunningCluster, books: str) -> None:
    body = _fields(cluster, books, {}).json()
    assert (body["offset"], body["limit"], body["total"]) == (0, 20, len(NAMES))
    assert [entry["name"] for entry in body["results"]] == NAMES[:20]
    body = _fields(cluster, books, {"offset": 10, "limit": 1, "filter": None}).json()
    assert [entry["name"] for entry in body["results"]] == [NAMES[10]]
    body = _fields(cluster, books, {"offset": 100, "limit": 0}).json()
    assert body == {"results": [], "offset": 100, "limit": 0, "total": len(NAMES)}


def test_fields_outlive_their_documents_and_the_primary_key_is_listed(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    wait_task(cluster, client.create_index("fields_pk", {"primaryKey": "sku"}).task_uid)
    assert [entry["name"] for entry in _fields(cluster, "fields_pk", {}).json()["results"]] == ["sku"]
    index = client.index("fields_pk")
    documents = [{"sku": "a", "color": {"hue": 1}}, {"sku": "b", "size": 3}]
    wait_task(cluster, index.add_documents(documents).task_uid)
    wait_task(cluster, index.delete_document("b").task_uid)
    wait_task(cluster, index.delete_all_documents().task_uid)
    listed = [entry["name"] for entry in _fields(cluster, "fields_pk", {}).json()["results"]]
    assert listed == ["color", "color.hue", "size", "sku"]
    wait_task(cluster, index.delete().task_uid)
    wait_task(cluster, client.create_index("fields_pk").task_uid)
    assert _fields(cluster, "fields_pk", {}).json()["total"] == 0


_FLAG_CODES = {
    "displayed": "displayed", "searchable": "searchable", "sortable": "sortable", "distinct": "distinct",
    "rankingRule": "ranking_rule", "filterable": "filterable",
}  # fmt: skip
_POSITIVE = "expected a positive integer, but found"
_ONE = "a positive integer: `1`"
_FILTER_KEYS = ", ".join(f"`{key}`" for key in ("attributePatterns", *_FLAG_CODES))


def _typed(path: str | None, problem: str) -> str:
    return f"Invalid value type{f' at `{path}`' if path else ''}: {problem}"


VALIDATION = [
    ({"offset": -1}, "invalid_index_offset", _typed(".offset", f"{_POSITIVE} a negative integer: `-1`")),
    ({"limit": "x"}, "invalid_index_limit", _typed(".limit", f'{_POSITIVE} a string: `"x"`')),
    ({"limit": None}, "invalid_index_limit", _typed(".limit", f"{_POSITIVE} null")),
    (
        {"filter": 1},
        "invalid_index_fields_filter",
        _typed(".filter", f"expected an object, but found {_ONE}"),
    ),
    (
        {"filter": {"attributePatterns": [1]}},
        "invalid_index_fields_filter_attribute_patterns",
        _typed(".filter.attributePatterns[0]", f"expected a string, but found {_ONE}"),
    ),
    *(
        (
            {"filter": {flag: 1}},
            f"invalid_index_fields_filter_{suffix}",
            _typed(f".filter.{flag}", f"expected a boolean, but found {_ONE}"),
        )
        for flag, suffix in _FLAG_CODES.items()
    ),
    ([], "bad_request", _typed(None, "expected an object, but found an array: `[]`")),
    (
        {"filter": {"foo": 1}},
        "invalid_index_fields_filter",
        f"Unknown field `foo` inside `.filter`: expected one of {_FILTER_KEYS}",
    ),
    ({"foo": 1}, "bad_request", "Unknown field `foo`: expected one of `offset`, `limit`, `filter`"),
]


@pytest.mark.parametrize(
    ("body", "code", "message"),
    VALIDATION,
)
def test_validation_errors(cluster: RunningCluster, books: str, body: Any, code: str, message: str) -> None:
    # The body is checked before the index: an unknown index gets the same answer.
    for uid in (books, "fields_nowhere"):
        response = _fields(cluster, uid, body)
        assert response.status_code == 400
        assert response.json() == {
            "message": message,
            "code": code,
            "type": "invalid_request",
            "link": f"https://docs.meilisearch.com/errors#{code}",
        }


def test_unknown_index_and_bad_requests(cluster: RunningCluster) -> None:
    response = _fields(cluster, "fields_nowhere", {})
    assert response.status_code == 404
    assert response.json()["code"] == "index_not_found"
    assert response.json()["message"] == "Index `fields_nowhere` not found."
    assert _fields(cluster, "bad!uid", {}).json()["code"] == "invalid_index_uid"
    missing = httpx.post(f"{cluster.url}/indexes/fields_nowhere/fields")
    assert (missing.status_code, missing.json()["code"]) == (415, "missing_content_type")
    json_type = {"content-type": "application/json"}
    empty = httpx.post(f"{cluster.url}/indexes/fields_nowhere/fields", headers=json_type)
    assert (empty.status_code, empty.json()["code"]) == (400, "missing_payload")
