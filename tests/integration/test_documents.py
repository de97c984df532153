"""Document routes (core.md §3.3) through the official client and raw HTTP, on two shards."""

from __future__ import annotations

import gzip
import json

import httpx
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import REPO_ROOT, RunningCluster

DATASETS = REPO_ROOT.parent / "shared" / "datasets"


def _post(
    cluster: RunningCluster, index: str, body: bytes, content_type: str, **params: str
) -> httpx.Response:
    return httpx.post(
        f"{cluster.url}/indexes/{index}/documents",
        content=body,
        headers={"Content-Type": content_type},
        params=params,
    )


def test_add_json_creates_the_index_and_infers_the_primary_key(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    docs = [{"id": i, "title": f"t{i}", "nested": {"a": [1, {"b": i}]}} for i in range(50)]
    task = wait_task(cluster, client.index("json-docs").add_documents(docs).task_uid)
    assert task["status"] == "succeeded"
    assert task["details"] == {"receivedDocuments": 50, "indexedDocuments": 50}
    assert client.get_index("json-docs").primary_key == "id"
    got = client.index("json-docs").get_documents({"limit": 100})
    assert got.total == 50
    assert sorted(d.id for d in got.results) == list(range(50))
    raw = httpx.get(f"{cluster.url}/indexes/json-docs/documents/7").json()
    assert raw == {"id": 7, "title": "t7", "nested": {"a": [1, {"b": 7}]}}
    assert list(raw) == ["id", "title", "nested"], "field order preserved"


def test_ndjson_and_csv_payloads(cluster: RunningCluster) -> None:
    ndjson = (DATASETS / "sdk-fixtures" / "python-songs.ndjson").read_bytes()
    task = _post(cluster, "songs-nd", ndjson, "application/x-ndjson").json()
    done = wait_task(cluster, task["taskUid"])
    assert done["status"] == "succeeded", done
    expected = sum(1 for line in ndjson.splitlines() if line.strip())
    assert done["details"]["indexedDocuments"] == expected
    csv_body = b"id,price:number,available:boolean,name\n1,12.5,true,lamp\n2,,false,desk\n"
    done = wait_task(cluster, _post(cluster, "csv-docs", csv_body, "text/csv").json()["taskUid"])
    assert done["status"] == "succeeded"
    doc = httpx.get(f"{cluster.url}/indexes/csv-docs/documents/1").json()
    assert doc == {"id": "1", "price": 12.5, "available": True, "name": "lamp"}
    semicolons = b"id;name\n9;chair\n"
    done = wait_task(
        cluster, _post(cluster, "csv-semi", semicolons, "text/csv", csvDelimiter=";").json()["taskUid"]
    )
    assert httpx.get(f"{cluster.url}/indexes/csv-semi/documents/9").json() == {"id": "9", "name": "chair"}


def test_compressed_document_payload(cluster: RunningCluster) -> None:
    body = gzip.compress(json.dumps([{"id": "gz", "v": 1}]).encode())
    response = httpx.post(
        f"{cluster.url}/indexes/gz-docs/documents",
        content=body,
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert wait_task(cluster, response.json()["taskUid"])["status"] == "succeeded"
    assert httpx.get(f"{cluster.url}/indexes/gz-docs/documents/gz").json() == {"id": "gz", "v": 1}


def test_replace_versus_partial_update(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("merge")
    wait_task(cluster, index.add_documents([{"id": 1, "a": 1, "b": 2}]).task_uid)
    wait_task(cluster, index.update_documents([{"id": 1, "b": 3, "c": 4}]).task_uid)
    assert httpx.get(f"{cluster.url}/indexes/merge/documents/1").json() == {"id": 1, "a": 1, "b": 3, "c": 4}
    wait_task(cluster, index.add_documents([{"id": 1, "z": 0}]).task_uid)
    assert httpx.get(f"{cluster.url}/indexes/merge/documents/1").json() == {"id": 1, "z": 0}


def test_deletions_by_id_batch_and_clear(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("deletions")
    wait_task(cluster, index.add_documents([{"id": i} for i in range(10)]).task_uid)
    one = wait_task(cluster, index.delete_document(3).task_uid)
    assert one["details"] == {"providedIds": 1, "deletedDocuments": 1, "originalFilter": None}
    many = wait_task(cluster, index.delete_documents(["4", "5", "404"]).task_uid)
    assert many["details"] == {"providedIds": 3, "deletedDocuments": 2, "originalFilter": None}
    assert index.get_documents().total == 7
    cleared = wait_task(cluster, index.delete_all_documents().task_uid)
    assert cleared["details"] == {"deletedDocuments": 7}
    assert index.get_documents().total == 0


def test_document_reads_pagination_fields_and_ids(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("reads")
    wait_task(cluster, index.add_documents([{"id": i, "x": i, "y": -i} for i in range(30)]).task_uid)
    page = httpx.get(f"{cluster.url}/indexes/reads/documents", params={"offset": 25, "limit": 10}).json()
    assert page["offset"] == 25 and page["limit"] == 10 and page["total"] == 30 and len(page["results"]) == 5
    fields = httpx.get(f"{cluster.url}/indexes/reads/documents", params={"fields": "x", "limit": 1}).json()
    assert list(fields["results"][0]) == ["x"]
    fetched = httpx.post(f"{cluster.url}/indexes/reads/documents/fetch", json={"ids": [2, "3", "999"]}).json()
    assert sorted(d["id"] for d in fetched["results"]) == [2, 3]
    assert fetched["total"] == 2
    all_ids = set()
    for offset in range(0, 30, 7):
        chunk = httpx.get(
            f"{cluster.url}/indexes/reads/documents", params={"offset": offset, "limit": 7}
        ).json()
        all_ids |= {d["id"] for d in chunk["results"]}
    assert all_ids == set(range(30)), "offset pages across shards cover every document once"


@pytest.mark.parametrize(
    ("content_type", "body", "status", "code"),
    [
        (None, b"[]", 415, "missing_content_type"),
        ("text/plain", b"[]", 415, "invalid_content_type"),
        ("application/json", b"", 400, "missing_payload"),
        ("application/json", b"[{", 400, "malformed_payload"),
        ("text/csv", b"id,a\n1,2,3\n", 400, "malformed_payload"),
    ],
)
def test_payload_errors(
    cluster: RunningCluster, content_type: str | None, body: bytes, status: int, code: str
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    response = httpx.post(f"{cluster.url}/indexes/errs/documents", content=body, headers=headers)
    assert response.status_code == status
    assert response.json()["code"] == code


def test_task_level_document_errors(cluster: RunningCluster) -> None:
    no_candidate = _post(cluster, "pk-none", b'[{"name": "x"}]', "application/json").json()
    failed = wait_task(cluster, no_candidate["taskUid"])
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == "index_primary_key_no_candidate_found"
    several = _post(cluster, "pk-many", b'[{"id": 1, "uid": 2}]', "application/json").json()
    assert (
        wait_task(cluster, several["taskUid"])["error"]["code"]
        == "index_primary_key_multiple_candidates_found"
    )
    bad_id = _post(cluster, "bad-id", b'[{"id": "a b"}]', "application/json").json()
    failed = wait_task(cluster, bad_id["taskUid"])
    assert failed["error"]["code"] == "invalid_document_id"
    assert failed["details"] == {"receivedDocuments": 1, "indexedDocuments": 0}
    missing = _post(cluster, "bad-id", b'[{"name": "x"}]', "application/json", primaryKey="id").json()
    assert wait_task(cluster, missing["taskUid"])["error"]["code"] == "missing_document_id"


def test_reading_errors(cluster: RunningCluster) -> None:
    assert httpx.get(f"{cluster.url}/indexes/nowhere/documents").json()["code"] == "index_not_found"
    wait_task(cluster, client_for(cluster).index("errs-read").add_documents([{"id": 1}]).task_uid)
    missing = httpx.get(f"{cluster.url}/indexes/errs-read/documents/2")
    assert missing.status_code == 404
    assert missing.json()["message"] == "Document `2` not found."
    bad = httpx.get(f"{cluster.url}/indexes/errs-read/documents", params={"limit": "doggo"})
    assert bad.json()["code"] == "invalid_document_limit"
    unknown = httpx.get(f"{cluster.url}/indexes/errs-read/documents", params={"doggo": "1"})
    assert unknown.json()["code"] == "bad_request"
    no_filter = httpx.post(f"{cluster.url}/indexes/errs-read/documents/delete", json={})
    assert no_filter.json()["code"] == "missing_document_filter"


def test_movies_dataset_round_trip(cluster: RunningCluster) -> None:
    movies = json.loads((DATASETS / "movies-1688" / "movies.json").read_text())
    task = wait_task(cluster, client_for(cluster).index("movies").add_documents(movies).task_uid, timeout=60)
    assert task["details"]["indexedDocuments"] == len(movies)
    stats = httpx.get(f"{cluster.url}/indexes/movies/stats").json()
    assert stats["numberOfDocuments"] == len(movies)
    assert stats["fieldDistribution"]["title"] == len(movies)
    sample = movies[123]
    assert httpx.get(f"{cluster.url}/indexes/movies/documents/{sample['id']}").json() == sample


def test_skip_creation_only_updates_existing_documents(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("skip-creation")
    wait_task(cluster, index.add_documents([{"id": 1, "a": 1}]).task_uid)
    response = httpx.put(
        f"{cluster.url}/indexes/skip-creation/documents",
        json=[{"id": 1, "b": 2}, {"id": 2, "b": 3}],
        params={"skipCreation": "true"},
    )
    done = wait_task(cluster, response.json()["taskUid"])
    assert done["details"] == {"receivedDocuments": 2, "indexedDocuments": 1}
    assert httpx.get(f"{cluster.url}/indexes/skip-creation/documents/1").json() == {"id": 1, "a": 1, "b": 2}
    assert httpx.get(f"{cluster.url}/indexes/skip-creation/documents/2").status_code == 404
    bad = httpx.post(f"{cluster.url}/indexes/skip-creation/documents", json=[], params={"skipCreation": "x"})
    assert bad.json()["code"] == "invalid_skip_creation"


def test_global_stats_sum_every_shard(cluster: RunningCluster) -> None:
    wait_task(
        cluster, client_for(cluster).index("stats-a").add_documents([{"id": i} for i in range(12)]).task_uid
    )
    stats = httpx.get(f"{cluster.url}/stats").json()
    assert list(stats) == ["databaseSize", "usedDatabaseSize", "lastUpdate", "indexes"]
    assert stats["indexes"]["stats-a"]["numberOfDocuments"] == 12
    assert stats["databaseSize"] > 0 and stats["lastUpdate"].endswith("Z")
    human = httpx.get(f"{cluster.url}/stats", params={"sizeFormat": "human"}).json()
    assert human["databaseSize"].endswith("iB") or human["databaseSize"].endswith(" B")
    assert (
        httpx.get(f"{cluster.url}/stats", params={"sizeFormat": "kb"}).json()["code"]
        == "invalid_stats_size_format"
    )


def test_documents_list_in_insertion_order_whatever_the_shard_count() -> None:
    """Shards number their own documents, so only the sequence gives one order on 1 and on 3 shards."""
    first = [{"id": f"d{n * 37 % 101}", "task": 1} for n in range(40)]
    # A replacement keeps its place; the new documents follow every document of the first task.
    second = [{"id": f"e{n * 53 % 97}", "task": 2} for n in range(20)]
    second.insert(7, {"id": first[5]["id"], "task": 2})
    expected = [doc["id"] for doc in first] + [doc["id"] for doc in second if doc["id"] != first[5]["id"]]
    with RunningCluster(shards=1) as one, RunningCluster(shards=3) as three:
        for running in (one, three):
            index = client_for(running).index("insertion-order")
            for docs in (first, second):
                assert wait_task(running, index.add_documents(docs).task_uid)["status"] == "succeeded"
            url = f"{running.url}/indexes/insertion-order/documents"
            listed = httpx.get(url, params={"limit": 100}).json()["results"]
            assert [doc["id"] for doc in listed] == expected
            assert listed[5] == {"id": first[5]["id"], "task": 2}
            paged = [
                doc["id"]
                for offset in range(0, len(expected), 9)
                for doc in httpx.get(url, params={"offset": offset, "limit": 9}).json()["results"]
            ]
            assert paged == expected
