"""Personalized search (``personalize``, ``--experimental-personalization-api-key``): the page's hits
reranked by a provider speaking Cohere's rerank API, here a real one on loopback (the local MiniLM as a
bi-encoder, ``tests/support/embedding_servers.py``); a failing, slow or unreachable provider leaves the
search order, logged, and never fails the search."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import meilisearch
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.client import switch_features, wait_task
from tests.support.cluster import RunningCluster
from tests.support.embedding_servers import EmbeddingServer

KEY = "rerank-provider-key"
RERANK = "/v2/rerank"
SHOES = [
    {"id": 1, "title": "Kids canvas shoes", "description": "Colourful sneakers for children at school"},
    {
        "id": 2,
        "title": "Leather oxford shoes",
        "description": "Formal dress shoes for the office and weddings",
    },
    {"id": 3, "title": "Trail running shoes", "description": "Light shoes for marathon training and jogging"},
    {"id": 4, "title": "Hiking shoes", "description": "Waterproof boots for mountain trekking"},
]
RUNNER = "I run marathons and go jogging every morning"
FORMAL = "I dress formally for the office and for weddings"
NOT_ENABLED = (
    "reranking search results requires enabling the `personalization` experimental feature. "
    "See https://github.com/orgs/meilisearch/discussions/866"
)


def _with_shoes(cluster: RunningCluster) -> RunningCluster:
    task = meilisearch.Client(cluster.url).index("shoes").add_documents(SHOES, primary_key="id")
    assert wait_task(cluster, task.task_uid)["status"] == "succeeded"
    return cluster


@pytest.fixture(scope="module")
def personalized(embedding_server: EmbeddingServer) -> Iterator[RunningCluster]:
    options = (
        "--experimental-personalization-api-key", KEY,
        "--experimental-personalization-url", embedding_server.url,
        "--experimental-allowed-ip-networks", "127.0.0.0/8",
    )  # fmt: skip
    with RunningCluster(*options, shards=2) as running:
        yield _with_shoes(running)


@pytest.fixture
def provider(embedding_server: EmbeddingServer) -> Iterator[EmbeddingServer]:
    embedding_server.reset()
    yield embedding_server
    embedding_server.reset()


def search(cluster: RunningCluster, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{cluster.url}/indexes/shoes/search", json=body, timeout=30)


def ids(response: httpx.Response) -> list[int]:
    assert response.status_code == 200, response.text
    return [hit["id"] for hit in response.json()["hits"]]


def test_the_user_context_reorders_the_page(personalized: RunningCluster, provider: EmbeddingServer) -> None:
    plain = ids(search(personalized, {"q": "shoes"}))
    runner = search(
        personalized, {"q": "shoes", "personalize": {"userContext": RUNNER}, "showRankingScore": True}
    )
    formal = ids(search(personalized, {"q": "shoes", "personalize": {"userContext": FORMAL}}))
    assert ids(runner)[0] == 3 and formal[0] == 2, (plain, ids(runner), formal)
    assert sorted(ids(runner)) == sorted(formal) == sorted(plain)
    assert all("_rankingScore" in hit for hit in runner.json()["hits"])
    assert provider.requests[RERANK] == 2
    sent = provider.last_body
    assert provider.last_headers["authorization"] == f"Bearer {KEY}"
    assert sent["model"] == "rerank-v3.5" and sent["top_n"] == 4
    assert sent["query"] == f"{FORMAL}\nSearch query: shoes"
    assert len(sent["documents"]) == 4 and all(d.startswith("id: ") for d in sent["documents"])
    assert "title: Leather oxford shoes\ndescription: Formal dress shoes" in "".join(sent["documents"])


def test_only_the_returned_page_is_reranked(personalized: RunningCluster, provider: EmbeddingServer) -> None:
    for offset in (0, 2):
        page = {"q": "shoes", "offset": offset, "limit": 2}
        plain = ids(search(personalized, page))
        reranked = ids(search(personalized, {**page, "personalize": {"userContext": RUNNER}}))
        assert sorted(reranked) == sorted(plain)
        assert len(provider.last_body["documents"]) == 2


def test_get_multi_search_and_federated_search_personalize(
    personalized: RunningCluster, provider: EmbeddingServer
) -> None:
    got = httpx.get(
        f"{personalized.url}/indexes/shoes/search", params={"q": "shoes", "personalizeUserContext": RUNNER}
    )
    assert ids(got)[0] == 3
    query = {"indexUid": "shoes", "q": "shoes", "personalize": {"userContext": FORMAL}}
    multi = httpx.post(f"{personalized.url}/multi-search", json={"queries": [query]}).json()
    assert multi["results"][0]["hits"][0]["id"] == 2
    federated = httpx.post(
        f"{personalized.url}/multi-search",
        json={
            "federation": {"personalize": {"userContext": RUNNER}},
            "queries": [{"indexUid": "shoes", "q": "shoes"}, {"indexUid": "shoes", "q": "boots"}],
        },
    ).json()
    assert federated["hits"][0]["id"] == 3, federated
    assert provider.last_body["query"] == f"{RUNNER}\nSearch query: shoes; boots"
    assert provider.requests[RERANK] == 3


def _personalized_count(cluster: RunningCluster) -> float:
    response = httpx.get(f"{cluster.url}/metrics", timeout=30)
    assert response.status_code == 200, response.text
    (family,) = [
        family
        for family in text_string_to_metric_families(response.text)
        if family.name == "meilisearch_personalized_search_requests"
    ]
    (sample,) = family.samples
    return float(sample.value)


def test_metrics_count_personalized_searches(personalized: RunningCluster, provider: EmbeddingServer) -> None:
    """Each search, multi-search query or federation asking for personalization counts once, whatever
    the provider answers; other searches do not count."""
    switch_features(personalized, metrics=True)
    try:
        before = _personalized_count(personalized)
        search(personalized, {"q": "shoes", "personalize": {"userContext": RUNNER}})
        search(personalized, {"q": "shoes"})
        query = {"indexUid": "shoes", "q": "shoes", "personalize": {"userContext": FORMAL}}
        httpx.post(f"{personalized.url}/multi-search", json={"queries": [query, query]})
        federation = {"personalize": {"userContext": RUNNER}}
        body = {"federation": federation, "queries": [{"indexUid": "shoes", "q": "shoes"}]}
        httpx.post(f"{personalized.url}/multi-search", json=body)
        provider.fail_next(1, 500)
        search(personalized, {"q": "shoes", "personalize": {"userContext": RUNNER}})
        assert _personalized_count(personalized) - before == 5
    finally:
        switch_features(personalized, metrics=False)


@pytest.mark.parametrize(
    ("trouble", "logged"),
    [
        ("error", "the provider answered 500"),
        ("garbage", "does not rank each document of the page once"),
        ("timeout", "the provider did not answer within 3 s"),
    ],
)
def test_a_failing_provider_leaves_the_search_order(
    personalized: RunningCluster, provider: EmbeddingServer, trouble: str, logged: str
) -> None:
    plain = ids(search(personalized, {"q": "shoes"}))
    if trouble == "error":
        provider.fail_next(1, 500)
    elif trouble == "garbage":
        provider.fail_next(1, 200, b'{"results": [{"index": 7, "relevance_score": 1.0}]}')
    else:
        provider.delay_s = 5.0
    started = time.monotonic()
    response = search(personalized, {"q": "shoes", "personalize": {"userContext": RUNNER}})
    assert ids(response) == plain
    assert provider.requests[RERANK] == 1
    if trouble == "timeout":
        assert 2.9 <= time.monotonic() - started < 5.0
    _wait_for_line(personalized, "personalization failed", logged)


def _wait_for_line(cluster: RunningCluster, *parts: str) -> None:
    deadline = time.monotonic() + 5
    while not any(all(part in line for part in parts) for line in cluster.output):
        assert time.monotonic() < deadline, cluster.output[-10:]
        time.sleep(0.05)
    assert not any(KEY in line for line in cluster.output)  # the provider's key is never logged


@pytest.mark.parametrize(
    ("personalize", "code", "message"),
    [
        ({}, "invalid_search_personalize", "Missing field `userContext` inside `.personalize`"),
        (
            {"userContext": 5},
            "invalid_search_personalize_user_context",
            "Invalid value type at `.personalize.userContext`: expected a string, but found a positive"
            " integer: `5`",
        ),
        (
            {"userContext": None},
            "invalid_search_personalize_user_context",
            "Invalid value type at `.personalize.userContext`: expected a string, but found null",
        ),
        (
            "x",
            "invalid_search_personalize",
            'Invalid value type at `.personalize`: expected an object, but found a string: `"x"`',
        ),
        (
            {"userContext": "x", "other": 1},
            "invalid_search_personalize",
            "Unknown field `other` inside `.personalize`: expected one of `userContext`",
        ),
    ],
)
def test_invalid_personalize_is_refused_as_the_reference_does(
    personalized: RunningCluster, personalize: object, code: str, message: str
) -> None:
    response = search(personalized, {"q": "shoes", "personalize": personalize})
    assert response.status_code == 400
    assert response.json()["code"] == code and response.json()["message"] == message


def test_federation_personalize_is_validated(personalized: RunningCluster) -> None:
    body = {"federation": {"personalize": {}}, "queries": [{"indexUid": "shoes", "q": "shoes"}]}
    response = httpx.post(f"{personalized.url}/multi-search", json=body)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_search_personalize"
    assert response.json()["message"] == "Missing field `userContext` inside `.federation.personalize`"


def test_without_the_api_key_personalize_is_a_feature_not_enabled() -> None:
    with RunningCluster(shards=1) as running:
        _with_shoes(running)
        context = {"userContext": RUNNER}
        for response, prefix in (
            (search(running, {"q": "shoes", "personalize": context}), ""),
            (search(running, {"q": "nothing matches", "personalize": {"userContext": ""}}), ""),
            (httpx.get(f"{running.url}/indexes/shoes/search", params={"personalizeUserContext": ""}), ""),
            (
                httpx.post(
                    f"{running.url}/multi-search",
                    json={"queries": [{"indexUid": "shoes", "personalize": context}]},
                ),
                "Inside `.queries[0]`: ",
            ),
            (
                httpx.post(
                    f"{running.url}/multi-search",
                    json={"federation": {"personalize": context}, "queries": [{"indexUid": "shoes"}]},
                ),
                "",
            ),
        ):
            assert response.status_code == 400, response.text
            assert response.json()["code"] == "feature_not_enabled"
            assert response.json()["message"] == prefix + NOT_ENABLED
        # The search's own errors come first, and null is no personalization.
        missing = httpx.post(f"{running.url}/indexes/none/search", json={"personalize": context})
        assert missing.json()["code"] == "index_not_found"
        assert ids(search(running, {"q": "shoes", "personalize": None}))


def test_the_provider_is_reached_through_the_outbound_guard(provider: EmbeddingServer) -> None:
    """Without `--experimental-allowed-ip-networks`, a provider on loopback is refused before any
    request is sent; the search still answers, in its own order."""
    options = (
        "--experimental-personalization-api-key",
        KEY,
        "--experimental-personalization-url",
        provider.url,
    )
    with RunningCluster(*options, shards=1) as running:
        _with_shoes(running)
        plain = ids(search(running, {"q": "shoes"}))
        assert ids(search(running, {"q": "shoes", "personalize": {"userContext": RUNNER}})) == plain
        _wait_for_line(running, "personalization failed", "which is not a public address")
    assert provider.requests[RERANK] == 0
