"""``retrieveVectors`` and the reserved ``_vectors`` field (search.md §1.6, core.md §3.3), no embedder.

A document's ``_vectors`` is stored as given, never shown as an ordinary field, and comes last, as a
map of embedders (``{}`` when the document has none), exactly when ``retrieveVectors`` is true.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

INDEX = "vectors"
USER_VECTORS = {"x": {"embeddings": [[1.5, 2.0]], "regenerate": False}}
DOCS = [
    {"id": 1, "title": "plain hello"},
    {"id": 2, "_vectors": USER_VECTORS, "title": "vector hello", "year": 2001},
]
WITH = [
    {"id": 1, "title": "plain hello", "_vectors": {}},
    {"id": 2, "title": "vector hello", "year": 2001, "_vectors": USER_VECTORS},
]
WITHOUT = [{"id": 1, "title": "plain hello"}, {"id": 2, "title": "vector hello", "year": 2001}]


@pytest.fixture(scope="module")
def index(cluster: RunningCluster) -> str:
    task = client_for(cluster).index(INDEX).add_documents(DOCS, primary_key="id")
    assert wait_task(cluster, task.task_uid)["status"] == "succeeded"
    return INDEX


def _get(cluster: RunningCluster, path: str, **params: Any) -> httpx.Response:
    return httpx.get(f"{cluster.url}/indexes/{INDEX}{path}", params=params)


def _post(cluster: RunningCluster, path: str, body: Any) -> httpx.Response:
    return httpx.post(f"{cluster.url}{path}", json=body)


def _by_id(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(hits, key=lambda hit: hit["id"])


@pytest.mark.usefixtures("index")
def test_document_routes_show_vectors_last_only_when_asked(cluster: RunningCluster) -> None:
    for flag, expected in (("true", WITH), ("false", WITHOUT)):
        got = _get(cluster, "/documents", retrieveVectors=flag).json()["results"]
        assert got == expected
        assert [list(doc) for doc in got] == [list(doc) for doc in expected], "_vectors comes last"
        assert _get(cluster, "/documents/2", retrieveVectors=flag).json() == expected[1]
    assert _get(cluster, "/documents").json()["results"] == WITHOUT
    assert _get(cluster, "/documents/2").json() == WITHOUT[1]
    fetched = client_for(cluster).index(INDEX).get_documents({"retrieveVectors": True})
    assert [dict(doc) for doc in fetched.results] == WITH
    fetched = client_for(cluster).index(INDEX).get_documents({"retrieveVectors": False})
    assert [dict(doc) for doc in fetched.results] == WITHOUT


@pytest.mark.usefixtures("index")
def test_fields_select_the_stored_vectors_only_by_name(cluster: RunningCluster) -> None:
    """Without ``_vectors`` in ``fields`` the map is empty; without ``retrieveVectors`` naming it
    shows nothing (as the reference engine answers)."""
    got = _get(cluster, "/documents", fields="title", retrieveVectors="true").json()["results"]
    assert got == [{"title": "plain hello", "_vectors": {}}, {"title": "vector hello", "_vectors": {}}]
    got = _get(cluster, "/documents", fields="_vectors", retrieveVectors="true").json()["results"]
    assert got == [{"_vectors": {}}, {"_vectors": USER_VECTORS}]
    assert _get(cluster, "/documents", fields="_vectors").json()["results"] == [{}, {}]
    body = {"fields": ["id", "_vectors"], "retrieveVectors": True}
    got = _post(cluster, f"/indexes/{INDEX}/documents/fetch", body).json()["results"]
    assert got == [{"id": 1, "_vectors": {}}, {"id": 2, "_vectors": USER_VECTORS}]
    one = _get(cluster, "/documents/2", fields="year", retrieveVectors="true").json()
    assert one == {"year": 2001, "_vectors": {}}


@pytest.mark.usefixtures("index")
def test_search_hits_carry_vectors_only_with_retrieve_vectors(cluster: RunningCluster) -> None:
    index = client_for(cluster).index(INDEX)
    assert _by_id(index.search("hello", {"retrieveVectors": True})["hits"]) == WITH
    assert _by_id(index.search("hello")["hits"]) == WITHOUT
    assert _by_id(_get(cluster, "/search", q="hello", retrieveVectors="true").json()["hits"]) == WITH
    assert _by_id(_get(cluster, "/search", q="hello", retrieveVectors="false").json()["hits"]) == WITHOUT
    # attributesToRetrieve neither adds nor removes _vectors: retrieveVectors decides
    hits = index.search("vector", {"retrieveVectors": True, "attributesToRetrieve": ["title"]})["hits"]
    assert hits == [{"title": "vector hello", "_vectors": USER_VECTORS}]
    assert index.search("vector", {"attributesToRetrieve": ["_vectors"]})["hits"] == [{}]
    hits = index.search("vector", {"retrieveVectors": True, "showRankingScore": True})["hits"]
    assert list(hits[0]) == ["id", "title", "year", "_vectors", "_rankingScore"]


@pytest.mark.usefixtures("index")
def test_multi_search_and_federation_follow_each_query(cluster: RunningCluster) -> None:
    queries = [
        {"indexUid": INDEX, "q": "vector", "retrieveVectors": True},
        {"indexUid": INDEX, "q": "vector"},
    ]
    results = client_for(cluster).multi_search(queries)["results"]
    assert results[0]["hits"] == [WITH[1]]
    assert results[1]["hits"] == [WITHOUT[1]]
    federated = _post(
        cluster, "/multi-search", {"federation": {}, "queries": [{**queries[0], "q": "plain"}, queries[1]]}
    ).json()["hits"]
    shown = [{key: value for key, value in hit.items() if key != "_federation"} for hit in federated]
    assert shown == [WITH[0], WITHOUT[1]]


def test_vectors_show_only_when_displayed(cluster: RunningCluster) -> None:
    """search.md §1.6 and §6.2: under ``displayedAttributes`` that do not list ``_vectors`` hits carry
    none; document routes ignore ``displayedAttributes``."""
    index = client_for(cluster).index("vectors-displayed")
    wait_task(cluster, index.add_documents(DOCS, primary_key="id").task_uid)
    wait_task(cluster, index.update_displayed_attributes(["id", "title"]).task_uid)
    hits = index.search("vector", {"retrieveVectors": True})["hits"]
    assert hits == [{"id": 2, "title": "vector hello"}]
    url = f"{cluster.url}/indexes/vectors-displayed/documents/2"
    assert httpx.get(url, params={"retrieveVectors": "true"}).json() == WITH[1]
    wait_task(cluster, index.update_displayed_attributes(["title", "_vectors"]).task_uid)
    hits = index.search("vector", {"retrieveVectors": True})["hits"]
    assert hits == [{"title": "vector hello", "_vectors": USER_VECTORS}]


@pytest.mark.usefixtures("index")
def test_retrieve_vectors_must_be_a_boolean(cluster: RunningCluster) -> None:
    parse = (
        "Invalid value in parameter `retrieveVectors`: could not parse `tamo` as a boolean, "
        "expected either `true` or `false`"
    )
    body = 'Invalid value type at `.retrieveVectors`: expected a boolean, but found a string: `"tamo"`'
    cases = [
        (_get(cluster, "/documents", retrieveVectors="tamo"), "invalid_document_retrieve_vectors", parse),
        (_get(cluster, "/documents/1", retrieveVectors="tamo"), "invalid_document_retrieve_vectors", parse),
        (
            _post(cluster, f"/indexes/{INDEX}/documents/fetch", {"retrieveVectors": "tamo"}),
            "invalid_document_retrieve_vectors",
            body,
        ),
        (_get(cluster, "/search", retrieveVectors="tamo"), "invalid_search_retrieve_vectors", parse),
        (
            _post(cluster, f"/indexes/{INDEX}/search", {"retrieveVectors": "tamo"}),
            "invalid_search_retrieve_vectors",
            body,
        ),
    ]
    for response, code, message in cases:
        assert response.status_code == 400
        error = response.json()
        assert (error["code"], error["type"], error["message"]) == (code, "invalid_request", message)
    multi = _post(cluster, "/multi-search", {"queries": [{"indexUid": INDEX, "retrieveVectors": 1}]})
    assert multi.status_code == 400
    assert multi.json()["code"] == "invalid_search_retrieve_vectors"
    assert multi.json()["message"].startswith("Invalid value type at `.queries[0].retrieveVectors`")


def test_user_vectors_are_stored_in_their_normal_form(cluster: RunningCluster) -> None:
    """Without an embedder the shape is checked and kept: arrays as sent, ``null`` as ``[]``, an
    explicit object as ``{regenerate, embeddings}`` (as the reference stores them)."""
    index = client_for(cluster).index("vectors-stored")
    docs = [
        {"id": "a", "_vectors": {"one": [1, 2], "many": [[1], [2, 3]], "none": None}},
        {
            "id": "b",
            "_vectors": {"kept": {"embeddings": [0.5], "regenerate": True}, "bare": {"regenerate": False}},
        },
        {"id": "c", "_vectors": {}},
    ]
    assert wait_task(cluster, index.add_documents(docs).task_uid)["status"] == "succeeded"
    url = f"{cluster.url}/indexes/vectors-stored/documents"
    got = httpx.get(url, params={"retrieveVectors": "true"}).json()["results"]
    assert got == [
        {"id": "a", "_vectors": {"one": [1, 2], "many": [[1], [2, 3]], "none": []}},
        {
            "id": "b",
            "_vectors": {
                "kept": {"regenerate": True, "embeddings": [0.5]},
                "bare": {"regenerate": False, "embeddings": None},
            },
        },
        {"id": "c", "_vectors": {}},
    ]
    assert list(got[1]["_vectors"]["kept"]) == ["regenerate", "embeddings"]


def test_a_bad_vectors_field_fails_its_task_only(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("vectors-bad")
    prefix = "Index `vectors-bad`: Bad embedder configuration in the document with id: "
    shapes = "an array of floats, an array of arrays of floats, or an object"
    cases = [
        (
            {"id": 4, "_vectors": 5},
            "`4`. Expected `._vectors` to be an object of embedder names, but got the integer `5`",
        ),
        (
            {"id": "s", "_vectors": None},
            "`s`. Expected `._vectors` to be an object of embedder names, but got null",
        ),
        (
            {"id": "a1", "_vectors": {"x": "abc"}},
            f"`a1`. Expected `._vectors.x` to be {shapes} with at least the field `regenerate`, but got"
            " the string `abc`",
        ),
        (
            {"id": "a2", "_vectors": {"x": 1.5}},
            f"`a2`. Expected `._vectors.x` to be {shapes} with at least the field `regenerate`, but got"
            " the number `1.5`",
        ),
        (
            {"id": "b2", "_vectors": {"x": {"embeddings": [1]}}},
            f"`b2`. Missing field `._vectors.x.regenerate`\n  - note: `._vectors.x` must be {shapes}"
            " with field `regenerate`",
        ),
        (
            {"id": "a4", "_vectors": {"x": {"regenerate": "yes"}}},
            '`a4`. Could not parse `._vectors.x.regenerate`: invalid type: string "yes", expected a boolean',
        ),
        (
            {"id": "a9", "_vectors": {"x": {"regenerate": True, "foo": 2}}},
            "`a9`. Could not parse `._vectors.x`: unknown field `foo`, expected `regenerate` or `embeddings`",
        ),
    ]
    good = index.add_documents([{"id": "fine", "_vectors": {"x": [1.0]}}]).task_uid
    bad = [index.add_documents([document]).task_uid for document, _ in cases]
    assert wait_task(cluster, good)["status"] == "succeeded"
    for task_uid, (_, message) in zip(bad, cases, strict=True):
        task = wait_task(cluster, task_uid)
        assert task["status"] == "failed"
        assert task["error"]["code"] == "invalid_vectors_type"
        assert task["error"]["type"] == "invalid_request"
        assert task["error"]["message"] == prefix + message
    assert index.get_documents().total == 1
