"""``POST /indexes/{uid}/documents/edit`` (flag ``editDocumentsByFunction``) is not supported: no Rhai
interpreter exists for Python. The request is read as the reference reads it (query string, body, flag)
and, flag on, refused with ``edit_documents_by_function_error`` before anything is enqueued.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.integration.search_support import assert_error
from tests.support.client import switch_features
from tests.support.cluster import RunningCluster

URL = "/indexes/books/documents/edit"
FLAG_OFF = (
    "Using the documents edit route requires enabling the `edit documents by function` experimental feature. "
    "See https://github.com/orgs/meilisearch/discussions/762"
)


def _edit(cluster: RunningCluster, body: Any, query: str = "") -> httpx.Response:
    return httpx.post(f"{cluster.url}{URL}{query}", json=body, timeout=30)


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        ({}, "missing_document_edition_function", "Missing field `function`"),
        (
            {"function": 3},
            "invalid_document_edition_function_filter",
            "Invalid value type at `.function`: expected a string, but found a positive integer: `3`",
        ),
        (
            {"function": "x", "foo": 3},
            "bad_request",
            "Unknown field `foo`: expected one of `filter`, `context`, `function`",
        ),
    ],
)
def test_body_is_validated_before_the_flag(
    cluster: RunningCluster, body: Any, code: str, message: str
) -> None:
    assert_error(_edit(cluster, body), code, message)


def test_unknown_query_parameter(cluster: RunningCluster) -> None:
    response = _edit(cluster, {"function": "x"}, "?foo=1")
    assert_error(response, "bad_request", "Unknown parameter `foo`: expected one of `customMetadata`")


def test_flag_off_then_on(cluster: RunningCluster) -> None:
    assert_error(_edit(cluster, {"function": "doc.title = 1", "filter": 3}), "feature_not_enabled", FLAG_OFF)
    switch_features(cluster, editDocumentsByFunction=True)
    tasks_before = httpx.get(f"{cluster.url}/tasks").json()["total"]
    response = _edit(cluster, {"function": "doc.title = 1"})
    assert_error(
        response,
        "edit_documents_by_function_error",
        prefix="Editing documents by function is not supported by Sift",
    )
    assert httpx.get(f"{cluster.url}/tasks").json()["total"] == tasks_before
