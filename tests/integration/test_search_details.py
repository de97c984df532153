"""``showPerformanceDetails`` and the ``Meili-Include-Metadata`` header (search.md §1.4, §2.2, §2.3;
core.md §1.11) on a real two-shard cluster, through the official client and raw HTTP.

Durations are real measurements, so the tests check what must hold of any measurement: every value
parses as a duration, a part never lasts longer than the whole it belongs to, and the steps named
are those the request went through.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import httpx
import pytest

from tests.support.client import client_for, wait_task
from tests.support.cluster import REPO_ROOT, RunningCluster

DATASETS = REPO_ROOT.parent / "shared" / "datasets"
MOVIES = json.loads((DATASETS / "movies-1688" / "movies.json").read_bytes())[:600]
BOOKS = json.loads((DATASETS / "sdk-fixtures" / "docs-books.json").read_bytes())
SHARDS = 2
SHARD_STEPS = ("open snapshot", "resolve query", "filter", "rank", "format hits")
DURATION = re.compile(r"^(\d+(?:\.\d\d)?)(ns|µs|ms|s)$")
UNIT_NS = {"ns": 1, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
# Durations are shown with two decimals: a sum of parts may exceed the rounded whole by this much.
ROUNDING = 0.01


@pytest.fixture(scope="module")
def indexes(cluster: RunningCluster) -> None:
    client = client_for(cluster)
    tasks = [
        client.index("movies").add_documents(MOVIES, primary_key="id").task_uid,
        client.index("movies").update_filterable_attributes(["genres"]).task_uid,
        client.index("books").add_documents(BOOKS, primary_key="id").task_uid,
        client.create_index("nopk").task_uid,
    ]
    for task in tasks:
        assert wait_task(cluster, task)["status"] == "succeeded"


def nanoseconds(text: str) -> float:
    match = DURATION.match(text)
    assert match, f"not a duration: {text!r}"
    return float(match.group(1)) * UNIT_NS[match.group(2)]


def durations(body: dict[str, Any]) -> dict[str, float]:
    details = body["performanceDetails"]
    assert isinstance(details, dict) and details
    return {step: nanoseconds(text) for step, text in details.items()}


def at_most(part: float, whole: float) -> bool:
    return part <= whole * (1 + ROUNDING) + 10


def check_ends(steps: dict[str, float]) -> None:
    """The wait for a search slot comes first, the whole search's time last."""
    names = list(steps)
    assert (names[0], names[-1]) == ("wait for permit", "search")


def check_index_steps(
    steps: dict[str, float], prefix: str, shard_steps: tuple[str, ...] = SHARD_STEPS
) -> None:
    """One index search under ``prefix``: fan-out and merge, and each shard's own steps, which run
    inside the fan-out's round trip."""
    assert {f"{prefix} > fan-out", f"{prefix} > merge"} <= set(steps)
    for shard in range(SHARDS):
        own = {step: steps.get(f"{prefix} > shard {shard} > {step}") for step in shard_steps}
        assert None not in own.values(), (shard, sorted(steps))
        assert at_most(
            sum(value for value in own.values() if value is not None), steps[f"{prefix} > fan-out"]
        )


def check_single(body: dict[str, Any], shard_steps: tuple[str, ...] = SHARD_STEPS) -> dict[str, float]:
    steps = durations(body)
    check_ends(steps)
    check_index_steps(steps, "search", shard_steps)
    gateway = [steps["search > fan-out"], steps["search > merge"], steps["search > format"]]
    assert at_most(sum(gateway), steps["search"])
    return steps


def post(
    cluster: RunningCluster, path: str, body: Any, headers: dict[str, str] | None = None
) -> httpx.Response:
    return httpx.post(f"{cluster.url}{path}", json=body, headers=headers, timeout=30)


def ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def assert_error(response: httpx.Response, code: str, message: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert (body["code"], body["message"], body["type"]) == (code, message, "invalid_request")


# --- showPerformanceDetails -------------------------------------------------------------------------


def test_search_with_the_flag_reports_every_step(cluster: RunningCluster, indexes: None) -> None:
    body = client_for(cluster).index("movies").search("star wars", {"showPerformanceDetails": True})
    assert body["hits"]
    check_single(body)
    assert list(body)[-1] == "performanceDetails"


def test_search_without_the_flag_has_no_details(cluster: RunningCluster, indexes: None) -> None:
    movies = client_for(cluster).index("movies")
    assert "performanceDetails" not in movies.search("star")
    assert "performanceDetails" not in movies.search("star", {"showPerformanceDetails": False})


def test_get_search_takes_the_flag_from_the_query_string(cluster: RunningCluster, indexes: None) -> None:
    url = f"{cluster.url}/indexes/movies/search"
    check_single(ok(httpx.get(url, params={"q": "love", "showPerformanceDetails": "true"})))
    assert "performanceDetails" not in ok(
        httpx.get(url, params={"q": "love", "showPerformanceDetails": "false"})
    )


def test_facets_distinct_and_frequency_show_their_own_steps(cluster: RunningCluster, indexes: None) -> None:
    movies = client_for(cluster).index("movies")
    faceted = movies.search("", {"showPerformanceDetails": True, "facets": ["genres"]})
    check_single(faceted, (*SHARD_STEPS, "facets"))
    # distinct: a second round counts what the page's values leave (summed into fan-out)
    distinct = movies.search("the", {"showPerformanceDetails": True, "distinct": "genres", "limit": 3})
    check_single(distinct, (*SHARD_STEPS, "count distinct"))
    frequency = movies.search(
        "the dark knight", {"showPerformanceDetails": True, "matchingStrategy": "frequency"}
    )
    check_single(frequency, (*SHARD_STEPS, "count terms"))
    plain = durations(movies.search("", {"showPerformanceDetails": True}))
    assert not [step for step in plain if step.endswith(("> facets", "> count distinct", "> count terms"))]


def test_multi_search_details_per_query(cluster: RunningCluster, indexes: None) -> None:
    queries = [
        {"indexUid": "movies", "q": "star", "showPerformanceDetails": True},
        {"indexUid": "books", "q": "prince"},
        {"indexUid": "books", "q": "prince", "showPerformanceDetails": False},
        {"indexUid": "movies", "showPerformanceDetails": None},
    ]
    results = client_for(cluster).multi_search(queries)["results"]
    check_single(results[0])
    assert list(results[0])[:2] == ["indexUid", "hits"] and list(results[0])[-1] == "performanceDetails"
    assert all("performanceDetails" not in result for result in results[1:])


def test_federated_details_cover_each_query(cluster: RunningCluster, indexes: None) -> None:
    queries = [{"indexUid": "movies", "q": "star"}, {"indexUid": "books", "q": "prince"}]
    federation = {"limit": 5, "showPerformanceDetails": True, "facetsByIndex": {"movies": ["genres"]}}
    body = client_for(cluster).multi_search(queries, federation)
    steps = durations(body)
    check_ends(steps)
    for position in range(len(queries)):
        check_index_steps(steps, f"search > query {position}")
        assert at_most(steps[f"search > query {position} > fan-out"], steps["search > queries"])
    assert at_most(steps["search > facets"], steps["search > queries"])
    assert at_most(steps["search > queries"] + steps["search > federate"], steps["search"])
    plain = client_for(cluster).multi_search(queries, {"limit": 5})
    assert "performanceDetails" not in plain


def test_facet_search_ignores_the_flag(cluster: RunningCluster, indexes: None) -> None:
    body = ok(
        post(cluster, "/indexes/movies/facet-search", {"facetName": "genres", "showPerformanceDetails": True})
    )
    assert body["facetHits"] and "performanceDetails" not in body


BOOL_TYPE = "Invalid value type at `{path}`: expected a boolean, but found {found}"
BAD_FLAGS = [("yes", 'a string: `"yes"`'), (1, "a positive integer: `1`"), ([], "an array: `[]`")]


@pytest.mark.parametrize(("value", "found"), BAD_FLAGS)
def test_bad_flag_types_are_refused_on_every_route(
    cluster: RunningCluster, indexes: None, value: Any, found: str
) -> None:
    code = "invalid_search_show_performance_details"
    search = post(cluster, "/indexes/movies/search", {"showPerformanceDetails": value})
    assert_error(search, code, BOOL_TYPE.format(path=".showPerformanceDetails", found=found))
    queries = [{"indexUid": "movies"}, {"indexUid": "movies", "showPerformanceDetails": value}]
    multi = post(cluster, "/multi-search", {"queries": queries})
    path = ".queries[1].showPerformanceDetails"
    assert_error(multi, code, BOOL_TYPE.format(path=path, found=found))
    federated = {"queries": queries[:1], "federation": {"showPerformanceDetails": value}}
    path = ".federation.showPerformanceDetails"
    assert_error(post(cluster, "/multi-search", federated), code, BOOL_TYPE.format(path=path, found=found))


def test_null_flag_is_refused_on_search_but_means_absent_in_a_multi_search_query(
    cluster: RunningCluster, indexes: None
) -> None:
    search = post(cluster, "/indexes/movies/search", {"showPerformanceDetails": None})
    message = BOOL_TYPE.format(path=".showPerformanceDetails", found="null")
    assert_error(search, "invalid_search_show_performance_details", message)
    multi = ok(
        post(cluster, "/multi-search", {"queries": [{"indexUid": "movies", "showPerformanceDetails": None}]})
    )
    assert "performanceDetails" not in multi["results"][0]


def test_get_flag_must_be_a_boolean(cluster: RunningCluster, indexes: None) -> None:
    response = httpx.get(f"{cluster.url}/indexes/movies/search", params={"showPerformanceDetails": "yes"})
    message = (
        "Invalid value in parameter `showPerformanceDetails`: could not parse `yes` as a boolean, expected"
        " either `true` or `false`"
    )
    assert_error(response, "invalid_search_show_performance_details", message)


@pytest.mark.parametrize("value", [True, False])
def test_federated_queries_may_not_ask_for_details(
    cluster: RunningCluster, indexes: None, value: bool
) -> None:
    body = {"queries": [{"indexUid": "movies", "showPerformanceDetails": value}], "federation": {}}
    message = (
        "Inside `.queries[0]`: Using `showPerformanceDetails` is not allowed in federated queries.\n - Hint:"
        " remove `showPerformanceDetails` from the query or remove `federation` from the request\n - Hint:"
        " pass `federation.showPerformanceDetails` to show performance details of the federated search"
    )
    assert_error(
        post(cluster, "/multi-search", body), "invalid_multi_search_query_show_performance_details", message
    )


# --- Meili-Include-Metadata --------------------------------------------------------------------------


def header(value: str | None) -> dict[str, str]:
    return {} if value is None else {"Meili-Include-Metadata": value}


def check_metadata(metadata: dict[str, Any], index_uid: str, primary_key: str | None) -> str:
    """The entry's shape; returns its ``queryUid``, a version-7 UUID."""
    expected = ["queryUid", "indexUid"] + ([] if primary_key is None else ["primaryKey"])
    assert list(metadata) == expected
    assert (metadata["indexUid"], metadata.get("primaryKey")) == (index_uid, primary_key)
    query_uid = metadata["queryUid"]
    assert str(uuid.UUID(query_uid)) == query_uid and uuid.UUID(query_uid).version == 7
    return str(query_uid)


@pytest.mark.parametrize("value", ["true", "1"])
def test_metadata_with_the_header_on_post_and_get(cluster: RunningCluster, indexes: None, value: str) -> None:
    first = ok(post(cluster, "/indexes/movies/search", {"q": "star"}, header(value)))
    uid = check_metadata(first["metadata"], "movies", "id")
    assert list(first)[-2:] == ["requestUid", "metadata"] and uid != first["requestUid"]
    again = ok(
        httpx.get(f"{cluster.url}/indexes/books/search", params={"q": "prince"}, headers=header(value))
    )
    assert check_metadata(again["metadata"], "books", "id") != uid


@pytest.mark.parametrize("value", [None, "false", "0", "yes", "", "true, 1"])
def test_other_header_values_add_nothing(cluster: RunningCluster, indexes: None, value: str | None) -> None:
    assert "metadata" not in ok(post(cluster, "/indexes/movies/search", {"q": "star"}, header(value)))
    results = ok(post(cluster, "/multi-search", {"queries": [{"indexUid": "movies"}]}, header(value)))[
        "results"
    ]
    assert "metadata" not in results[0]
    federated = {"queries": [{"indexUid": "movies"}], "federation": {}}
    assert "metadata" not in ok(post(cluster, "/multi-search", federated, header(value)))


def test_metadata_comes_before_performance_details(cluster: RunningCluster, indexes: None) -> None:
    body = ok(post(cluster, "/indexes/movies/search", {"showPerformanceDetails": True}, header("true")))
    assert list(body)[-3:] == ["requestUid", "metadata", "performanceDetails"]
    check_metadata(body["metadata"], "movies", "id")
    check_single(body)


def test_metadata_of_an_index_without_primary_key(cluster: RunningCluster, indexes: None) -> None:
    body = ok(post(cluster, "/indexes/nopk/search", {}, header("1")))
    assert body["hits"] == []
    check_metadata(body["metadata"], "nopk", None)


def test_multi_search_metadata_per_result(cluster: RunningCluster, indexes: None) -> None:
    queries = [{"indexUid": "movies", "q": "star"}, {"indexUid": "books"}, {"indexUid": "nopk", "q": "x"}]
    results = ok(post(cluster, "/multi-search", {"queries": queries}, header("true")))["results"]
    expected = [("movies", "id"), ("books", "id"), ("nopk", None)]
    uids = [
        check_metadata(result["metadata"], *entry) for result, entry in zip(results, expected, strict=True)
    ]
    assert len(set(uids)) == len(uids)
    assert all("query" not in result["metadata"] for result in results)


def test_federated_metadata_lists_the_queries(cluster: RunningCluster, indexes: None) -> None:
    queries = [
        {"indexUid": "movies", "q": "star"},
        {"indexUid": "books"},
        {"indexUid": "movies", "q": ""},
        {"indexUid": "nopk", "q": "prince"},
    ]
    body = {"queries": queries, "federation": {"showPerformanceDetails": True}}
    response = ok(post(cluster, "/multi-search", body, header("true")))
    assert list(response)[-3:] == ["requestUid", "metadata", "performanceDetails"]
    metadata = response["metadata"]
    assert len(metadata) == len(queries)
    uids = []
    for entry, query, primary_key in zip(metadata, queries, ["id", "id", "id", None], strict=True):
        query_text = query.get("q")
        if query_text:
            assert entry.pop("query") == query_text
        uids.append(check_metadata(entry, str(query["indexUid"]), primary_key))
    assert len(set(uids)) == len(uids)


def test_header_is_ignored_on_other_routes(cluster: RunningCluster, indexes: None) -> None:
    documents = httpx.get(
        f"{cluster.url}/indexes/movies/documents", params={"limit": 1}, headers=header("true")
    )
    assert "metadata" not in ok(documents)
    facets = ok(post(cluster, "/indexes/movies/facet-search", {"facetName": "genres"}, header("true")))
    assert "metadata" not in facets
    index = ok(httpx.get(f"{cluster.url}/indexes/movies", headers=header("true")))
    assert "metadata" not in index


def test_header_does_not_change_errors(cluster: RunningCluster, indexes: None) -> None:
    missing = post(cluster, "/indexes/nope/search", {"q": "x"}, header("true"))
    assert missing.status_code == 404 and missing.json()["code"] == "index_not_found"
    queries = [{"indexUid": "movies"}, {"indexUid": "nope"}]
    multi = post(cluster, "/multi-search", {"queries": queries}, header("true"))
    assert_error(multi, "index_not_found", "Inside `.queries[1]`: Index `nope` not found.")
