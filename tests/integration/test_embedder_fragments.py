# ruff: noqa: E501 - the expected messages are the reference's, wrapped where they allow it
"""Multimodal fragments of a ``rest`` embedder (search.md §6.11, experimental ``multimodal``) are
checked as the reference checks them: what the body shows wrong is a 400, what needs the stored
embedder fails the task, and a PATCH merges fragments by name. Expected messages are the reference's
(Meilisearch 1.50, asked with the same bodies), except the Liquid parser's own detail after ``liquid:``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.client import switch_features, wait_task
from tests.support.cluster import RunningCluster

CODE = "invalid_settings_embedders"
EMBEDDING = "vector_embedding_error"
USER_ERROR = "Error while generating embeddings: user error: "
REST = {"source": "rest", "url": "http://127.0.0.1:9/e", "dimensions": 3}
TITLE = {"t": {"value": "{{doc.title}}"}}
QUERY = {"q": {"value": "{{q}}"}}
FRAGMENT_REQUEST = {"request": {"input": "{{fragment}}"}, "response": {"e": "{{embedding}}"}}
MULTIMODAL = {**REST, "indexingFragments": TITLE, "searchFragments": QUERY, **FRAGMENT_REQUEST}
FRAGMENT_NOTE = (
    '\n  - Note: this template is using fragments, and so expects to contain the placeholder "{{fragment}}"'
    ' rathern than "{{text}}"'
)
TEXT_NOTE = (
    "\n  - Note: this template is using a document template, and so expects to contain the placeholder"
    ' "{{text}}" rather than "{{fragment}}"'
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster(shards=1) as running:
        switch_features(running, multimodal=True)
        yield running


def _patch(cluster: RunningCluster, uid: str, embedder: Any) -> httpx.Response:
    return httpx.patch(
        f"{cluster.url}/indexes/{uid}/settings", json={"embedders": {"e": embedder}}, timeout=30
    )


def _shown(cluster: RunningCluster, uid: str) -> dict[str, Any]:
    embedders: dict[str, Any] = httpx.get(f"{cluster.url}/indexes/{uid}/settings/embedders").json()
    return embedders["e"]


def _refused(cluster: RunningCluster, embedder: dict[str, Any], code: str) -> str:
    """The message of the 400 the body gets, once its code is checked."""
    response = _patch(cluster, "refused", embedder)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == code
    message: str = response.json()["message"]
    return message


def _succeeds(cluster: RunningCluster, uid: str, embedder: Any) -> None:
    response = _patch(cluster, uid, embedder)
    assert response.status_code == 202, response.text
    task = wait_task(cluster, response.json()["taskUid"])
    assert task["status"] == "succeeded", task["error"]


@pytest.mark.parametrize(
    ("embedder", "code", "message"),
    [
        pytest.param(
            {**MULTIMODAL, "indexingFragments": {"t": "{{doc.title}}"}},
            CODE,
            'Invalid value type at `.embedders.e.indexingFragments.t`: expected an object, but found a string: `"{{doc.title}}"`',
            id="fragment-not-an-object",
        ),
        pytest.param(
            {**MULTIMODAL, "indexingFragments": {"t": {"x": 1}}},
            CODE,
            "Missing field `value` inside `.embedders.e.indexingFragments.t`",
            id="fragment-without-value",
        ),
        pytest.param(
            {**MULTIMODAL, "indexingFragments": [1]},
            CODE,
            "Invalid value type at `.embedders.e.indexingFragments`: expected an object, but found an array: `[1]`",
            id="fragments-not-an-object",
        ),
        pytest.param(
            {**MULTIMODAL, "request": {"input": "{{text}}"}},
            EMBEDDING,
            f'{USER_ERROR}in `request`: "{{{{fragment}}}}" not found{FRAGMENT_NOTE}',
            id="text-placeholder-with-fragments",
        ),
        pytest.param(
            {**MULTIMODAL, "request": {"input": "{{fragment}}", "b": "{{fragment}}"}},
            EMBEDDING,
            f'{USER_ERROR}in `request.b`: Found "{{{{fragment}}}}", but it was already present in `request.input`{FRAGMENT_NOTE}',
            id="two-fragment-placeholders",
        ),
        pytest.param(
            {
                **MULTIMODAL,
                "request": {"input": ["x", "{{..}}"]},
                "response": {"e": ["{{embedding}}", "{{..}}"]},
            },
            EMBEDDING,
            f'{USER_ERROR}in `request.input[0]`: Expected "{{{{fragment}}}}" inside of the repeated value{FRAGMENT_NOTE}',
            id="repeated-value-without-fragment",
        ),
        pytest.param(
            {**MULTIMODAL, "indexingFragments": {}, "documentTemplate": "x"},
            EMBEDDING,
            f"{USER_ERROR}cannot pass both fragments and a document template.\n  - Note: 0 fragments declared in `indexingFragments` and 1 fragments declared in `search_fragments_len`.\n  - Hint: remove the declared fragments or remove the `documentTemplate`",
            id="fragments-and-document-template",
        ),
        pytest.param(
            {**MULTIMODAL, "response": {"e": "x"}},
            EMBEDDING,
            f'{USER_ERROR}in `response`: "{{{{embedding}}}}" not found',
            id="bad-response",
        ),
        pytest.param(
            {key: value for key, value in MULTIMODAL.items() if key not in ("url", "response")}
            | {"request": {"input": "x"}},
            EMBEDDING,
            f'{USER_ERROR}in `request`: "{{{{fragment}}}}" not found{FRAGMENT_NOTE}',
            id="request-checked-before-the-source-fields",
        ),
        pytest.param(
            {key: value for key, value in MULTIMODAL.items() if key != "request"}
            | {"searchFragments": {"q": {"value": "{{q"}}},
            CODE,
            "`.embedders.e`: Missing field `request` (note: this field is mandatory for source `rest`)",
            id="source-fields-before-liquid-without-request",
        ),
        pytest.param(
            {**REST, **FRAGMENT_REQUEST, "request": {"a": "{{fragment}}", "b": "{{fragment}}"}},
            EMBEDDING,
            f'{USER_ERROR}in `request`: "{{{{text}}}}" not found{TEXT_NOTE}',
            id="neither-placeholder-fits-without-fragments",
        ),
        pytest.param(
            {**REST, **FRAGMENT_REQUEST, "response": {"e": "x"}},
            EMBEDDING,
            f'{USER_ERROR}in `response`: "{{{{embedding}}}}" not found',
            id="fragment-request-then-response-without-fragments",
        ),
    ],
)
def test_bodies_the_reference_refuses(
    cluster: RunningCluster, embedder: dict[str, Any], code: str, message: str
) -> None:
    assert _refused(cluster, embedder, code) == message


@pytest.mark.parametrize(
    ("embedder", "code", "start"),
    [
        pytest.param(
            {**MULTIMODAL, "indexingFragments": {"t": {"value": {"a": ["ok", "{% if %}"]}}}},
            EMBEDDING,
            f"{USER_ERROR}in ``.indexingFragments.t.a[1]``, error while parsing template: liquid: ",
            id="nested-fragment-string",
        ),
        pytest.param(
            {**MULTIMODAL, "searchFragments": {"q": {"value": "{{ q"}}},
            EMBEDDING,
            f"{USER_ERROR}error while parsing template: liquid: ",
            id="search-fragment",
        ),
        pytest.param(
            {**MULTIMODAL, "indexingFragments": {"b": {"value": "{{b"}, "a": {"value": ["{{a"]}}},
            EMBEDDING,
            f"{USER_ERROR}in ``.indexingFragments.a[0]``, error while parsing template: liquid: ",
            id="fragments-in-name-order",
        ),
        pytest.param(
            {**MULTIMODAL, "indexingFragments": {"t": {"value": "{{doc.title"}}, "request": {"input": "x"}},
            EMBEDDING,
            f"{USER_ERROR}error while parsing template: liquid: ",
            id="liquid-before-request",
        ),
        pytest.param(
            {**REST, "documentTemplate": "{{x", "dimensions": 0, **FRAGMENT_REQUEST},
            CODE,
            "`.embedders.e.documentTemplate`: Invalid template: user error: cannot parse template: liquid: ",
            id="document-template-first",
        ),
        pytest.param(
            {"documentTemplate": "{{ x | nope }}"},
            CODE,
            "`.embedders.e.documentTemplate`: Invalid template: user error: cannot parse template: liquid: Unknown filter",
            id="document-template-unknown-filter",
        ),
    ],
)
def test_liquid_that_does_not_parse_is_refused(
    cluster: RunningCluster, embedder: dict[str, Any], code: str, start: str
) -> None:
    """The Liquid parser's own wording differs from the reference's Rust one; the rest is the same."""
    message = _refused(cluster, embedder, code)
    assert message.startswith(start), message


@pytest.mark.parametrize(
    ("embedder", "message"),
    [
        pytest.param(
            {**REST, **FRAGMENT_REQUEST, "indexingFragments": {"b": {"value": "x"}, "a": {"value": 1}}},
            f"{USER_ERROR}inconsistent fragments: `searchFragments` is empty, but `indexingFragments` declares 2 fragments: a, b\n - Hint: declare at least one fragment in `searchFragments` or remove fragments from `indexingFragments` by setting them to `null`",
            id="indexing-only",
        ),
        pytest.param(
            {**MULTIMODAL, "indexingFragments": {"t": None}},
            f"{USER_ERROR}inconsistent fragments: `indexingFragments` is empty, but `searchFragments` declares 1 fragments: q\n  - Hint: declare at least one fragment in `indexingFragments` or remove fragments from `searchFragments` by setting them to `null`",
            id="search-only",
        ),
        pytest.param(
            {**REST, **FRAGMENT_REQUEST},
            f'{USER_ERROR}in `request`: "{{{{text}}}}" not found{TEXT_NOTE}',
            id="fragment-placeholder-without-fragments",
        ),
    ],
)
def test_what_the_merged_embedder_shows_fails_the_task(
    cluster: RunningCluster, embedder: dict[str, Any], message: str
) -> None:
    response = _patch(cluster, "merged", embedder)
    assert response.status_code == 202, response.text
    task = wait_task(cluster, response.json()["taskUid"])
    assert task["status"] == "failed"
    assert task["error"]["code"] == EMBEDDING
    assert task["error"]["message"] == f"Index `merged`: {message}"
    assert "e" not in httpx.get(f"{cluster.url}/indexes/merged/settings/embedders").json()


def test_fragments_merge_by_name_and_decide_the_placeholder(cluster: RunningCluster) -> None:
    uid = "merge"
    _succeeds(cluster, uid, MULTIMODAL)
    assert "documentTemplate" not in _shown(cluster, uid)
    _succeeds(cluster, uid, {"indexingFragments": {"u": {"value": "{{doc.u}}"}}})
    assert _shown(cluster, uid)["indexingFragments"] == {**TITLE, "u": {"value": "{{doc.u}}"}}
    _succeeds(cluster, uid, {"indexingFragments": {"t": None}})
    assert _shown(cluster, uid)["indexingFragments"] == {"u": {"value": "{{doc.u}}"}}

    # A body that declares no fragment may hold "{{fragment}}": the stored fragments make it right...
    _succeeds(cluster, uid, {"request": {"input": "{{fragment}}", "other": 1}})
    # ...and "{{text}}" passes the body's check but not the stored fragments'.
    response = _patch(cluster, uid, {"request": {"input": "{{text}}"}})
    assert response.status_code == 202, response.text
    task = wait_task(cluster, response.json()["taskUid"])
    assert task["error"]["message"] == (
        f'Index `{uid}`: {USER_ERROR}in `request`: "{{{{fragment}}}}" not found{FRAGMENT_NOTE}'
    )

    # Removing every fragment (and the placeholder with them) brings the document template back.
    _succeeds(
        cluster,
        uid,
        {"indexingFragments": {"u": None}, "searchFragments": {"q": None}, "request": {"input": "{{text}}"}},
    )
    shown = _shown(cluster, uid)
    assert "indexingFragments" not in shown and "searchFragments" not in shown
    assert shown["documentTemplateMaxBytes"] == 400
