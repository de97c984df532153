"""``POST /render-template`` (flag ``renderRoute``): Liquid rendering shared with embedders'
``documentTemplate``.

Expectations come from the contract (openapi ``RenderQuery``/``RenderResult``, codes 265-269, search.md
§6.11's default template and ``documentTemplateMaxBytes``) and, where it is silent, from the reference
engine's answers (messages, the order of checks: body, flag, template, input; how values print).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import meilisearch
import pytest

from tests.integration.search_support import assert_error
from tests.support.auth import MASTER_KEY, bearer, create_key, secured_cluster
from tests.support.client import switch_features
from tests.support.cluster import RunningCluster

DOCS = [
    {"id": 1, "title": "Dune", "year": 1965, "tags": ["sf", "desert"], "meta": {"pages": 412}, "note": None},
    {"id": 2, "title": "Émile", "year": 1762},
]
INLINE = {"kind": "inlineDocumentTemplate", "inline": "{{ doc.title }} ({{ doc.year }})"}
FIELDS_TEMPLATE = "{% for field in fields %}{{ field.name }}={{ field.value }}|{% endfor %}"


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with secured_cluster() as running:
        admin = meilisearch.Client(running.url, MASTER_KEY)
        admin.wait_for_task(admin.index("books").add_documents(DOCS).task_uid)
        admin.wait_for_task(admin.index("other").add_documents(DOCS).task_uid)
        yield running


@pytest.fixture
def enabled(cluster: RunningCluster) -> Iterator[None]:
    _features(cluster, renderRoute=True)
    yield
    _features(cluster, renderRoute=False, multimodal=False)


def _features(cluster: RunningCluster, **features: bool) -> None:
    switch_features(cluster, bearer(MASTER_KEY), **features)


def _render(cluster: RunningCluster, body: Any, key: str = MASTER_KEY) -> httpx.Response:
    return httpx.post(f"{cluster.url}/render-template", json=body, headers=bearer(key), timeout=30)


def test_inline_template_with_an_index_document(cluster: RunningCluster, enabled: None) -> None:
    body = {"template": INLINE, "input": {"kind": "indexDocument", "indexUid": "books", "id": "2"}}
    response = _render(cluster, body)
    assert response.status_code == 200, response.text
    assert response.json() == {"template": INLINE["inline"], "rendered": "Émile (1762)"}


def test_without_input_the_template_is_echoed_unrendered(cluster: RunningCluster, enabled: None) -> None:
    assert _render(cluster, {"template": INLINE}).json() == {"template": INLINE["inline"], "rendered": None}


def test_values_print_as_the_reference_prints_them(cluster: RunningCluster, enabled: None) -> None:
    """Whole floats without `.0`, arrays and objects as their parts run together, null as nothing."""
    template = {
        "kind": "inlineDocumentTemplate",
        "inline": "{{doc.a}} {{doc.b}} [{{doc.c}}] {{doc.d}} {{doc.e}} {{doc.f}}",
    }
    inline = {"a": 1.5, "b": True, "c": None, "d": [1, "x", [2]], "e": {"k": "v", "n": {"m": 1}}, "f": 2.0}
    response = _render(cluster, {"template": template, "input": {"kind": "inlineDocument", "inline": inline}})
    assert response.json()["rendered"] == "1.5 true [] 1x2 kvnm1 2"


def test_fields_loop_lists_every_top_level_field(cluster: RunningCluster, enabled: None) -> None:
    template = {"kind": "inlineDocumentTemplate", "inline": FIELDS_TEMPLATE}
    body = {"template": template, "input": {"kind": "indexDocument", "indexUid": "books", "id": "1"}}
    rendered = _render(cluster, body).json()["rendered"]
    assert rendered == "id=1|title=Dune|year=1965|tags=sfdesert|meta=pages412|note=|"


def test_document_template_max_bytes_cuts_on_a_character_boundary(
    cluster: RunningCluster, enabled: None
) -> None:
    """search.md §6.11: rendered text is truncated to `documentTemplateMaxBytes` (400 by default)."""
    long = {"kind": "inlineDocument", "inline": {"t": "é" * 300}}
    cut = {"kind": "inlineDocumentTemplate", "inline": "{{ doc.t }}", "documentTemplateMaxBytes": 5}
    assert _render(cluster, {"template": cut, "input": long}).json()["rendered"] == "éé"
    default = {"kind": "inlineDocumentTemplate", "inline": "{{ doc.t }}"}
    assert _render(cluster, {"template": default, "input": long}).json()["rendered"] == "é" * 200


def test_index_document_errors(cluster: RunningCluster, enabled: None) -> None:
    missing = {"template": INLINE, "input": {"kind": "indexDocument", "indexUid": "books", "id": "99"}}
    message = "error while fetching input: document `99` not found in `books`"
    assert_error(_render(cluster, missing), "render_document_not_found", message, status=404)
    no_index = {"template": INLINE, "input": {"kind": "indexDocument", "indexUid": "nope", "id": "1"}}
    message = "Cannot open index `nope`: Index `nope` not found."
    assert_error(_render(cluster, no_index), "index_not_found", message, status=404)


def test_template_errors(cluster: RunningCluster, enabled: None) -> None:
    doc = {"kind": "inlineDocument", "inline": {"a": 1}}
    broken = {"template": {"kind": "inlineDocumentTemplate", "inline": "{{ doc.a "}, "input": doc}
    prefix = "error while fetching template: user error: cannot parse template: liquid: "
    assert_error(_render(cluster, broken), "template_parsing_error", prefix=prefix)
    unknown_filter = {"template": {"kind": "inlineDocumentTemplate", "inline": "{{ doc.a | nofilter }}"}}
    assert_error(
        _render(cluster, unknown_filter),
        "template_parsing_error",
        prefix=prefix + "Unknown filter `nofilter`",
    )
    undefined = {"template": {"kind": "inlineDocumentTemplate", "inline": "{{ doc.missing }}"}, "input": doc}
    prefix = "error while rendering template: user error: missing field in document: liquid: "
    assert_error(_render(cluster, undefined), "template_rendering_error", prefix=prefix)


def test_embedder_document_template_and_its_max_bytes(cluster: RunningCluster, enabled: None) -> None:
    """The `documentTemplate` kind renders what the embedder would embed: its template, cut to its
    `documentTemplateMaxBytes` unless the request overrides it; `_vectors` is never shown."""
    admin = meilisearch.Client(cluster.url, MASTER_KEY)
    rest = {
        "source": "rest",
        "url": "http://127.0.0.1:9/embed",
        "request": {"input": "{{text}}"},
        "response": {"embedding": "{{embedding}}"},
        "dimensions": 2,
        "documentTemplate": "{{ doc.title }} ({{ doc.year }})",
        "documentTemplateMaxBytes": 6,
    }
    embedders = {"rest": rest, "own": {"source": "userProvided", "dimensions": 2}}
    task = admin.wait_for_task(admin.index("embedded").update_embedders(embedders).task_uid)
    assert task.status == "succeeded", task
    # `rest` given its vectors: its URL answers nothing, and embedding would fail the task
    document = {"id": 1, "title": "Dune", "year": 1965, "_vectors": {"own": [0.1, 0.2], "rest": [0.3, 0.4]}}
    added = admin.wait_for_task(admin.index("embedded").add_documents([document]).task_uid)
    assert added.status == "succeeded", added
    given = {"kind": "indexDocument", "indexUid": "embedded", "id": "1"}
    template = {"kind": "documentTemplate", "indexUid": "embedded", "embedder": "rest"}
    response = _render(cluster, {"template": template, "input": given})
    assert response.json() == {"template": rest["documentTemplate"], "rendered": "Dune ("}, response.text
    wider = {**template, "documentTemplateMaxBytes": 100}
    assert _render(cluster, {"template": wider, "input": given}).json()["rendered"] == "Dune (1965)"
    inline = {"kind": "inlineDocumentTemplate", "inline": FIELDS_TEMPLATE}
    assert (
        _render(cluster, {"template": inline, "input": given}).json()["rendered"]
        == "id=1|title=Dune|year=1965|"
    )
    own = {"template": {**template, "embedder": "own"}}
    message = (
        "error while fetching template: embedder `own` in index `embedded` does not use a document template."
    )
    assert_error(_render(cluster, own), "invalid_render_template", message)


def test_embedder_templates_come_from_the_index_settings(cluster: RunningCluster, enabled: None) -> None:
    body = {"template": {"kind": "documentTemplate", "indexUid": "books", "embedder": "default"}}
    message = "error while fetching template: cannot find embedder `default` in index `books`"
    assert_error(_render(cluster, body), "invalid_render_template", message)
    body = {"template": {"kind": "documentTemplate", "indexUid": "nope", "embedder": "default"}}
    message = "error while fetching template: cannot open index `nope`: Index `nope` not found."
    assert_error(_render(cluster, body), "index_not_found", message, status=404)


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        ({}, "bad_request", "Missing field `template`"),
        (
            {"template": 3},
            "invalid_render_template",
            "Invalid value type at `.template`: expected an object, but found a positive integer: `3`",
        ),
        (
            {"template": {"kind": "foo"}},
            "invalid_render_template",
            "Unknown value `foo` at `.template.kind`: expected one of `documentTemplate`, "
            "`chatDocumentTemplate`, "
            "`indexingFragment`, `searchFragment`, `inlineDocumentTemplate`, `inlineFragment`",
        ),
        (
            {"template": {"kind": "inlineDocumentTemplate"}},
            "invalid_render_template",
            "error while fetching template: parameter `inline` missing for kind `inlineDocumentTemplate`",
        ),
        (
            {"template": {"kind": "inlineDocumentTemplate", "inline": 3}},
            "invalid_render_template",
            "error while fetching template: inline document templates must be strings",
        ),
        (
            {"template": {"kind": "inlineDocumentTemplate", "inline": "x", "embedder": "e"}},
            "invalid_render_template",
            "error while fetching template: parameter `embedder` disallowed for kind "
            "`inlineDocumentTemplate`",
        ),
        (
            {"template": {"kind": "documentTemplate"}},
            "invalid_render_template",
            "error while fetching template: parameter `index_uid` missing for kind `documentTemplate`",
        ),
        (
            {"template": {"kind": "inlineDocumentTemplate", "inline": "x", "documentTemplateMaxBytes": -1}},
            "invalid_render_template",
            "Invalid value type at `.template.documentTemplateMaxBytes`: expected a "
            "positive integer, but found a negative integer: `-1`",
        ),
        (
            {"template": INLINE, "input": {"kind": "bad"}},
            "invalid_render_input",
            "Unknown value `bad` at `.input.kind`: expected one of `indexDocument`, `inlineDocument`, "
            "`inlineSearch`",
        ),
        (
            {"template": INLINE, "input": {"kind": "indexDocument", "indexUid": "books"}},
            "invalid_render_input",
            "error while fetching input: parameter `id` missing for kind `indexDocument`",
        ),
        (
            {"template": INLINE, "input": {"kind": "inlineDocument", "inline": {}, "id": "3"}},
            "invalid_render_input",
            "error while fetching input: parameter `id` disallowed for kind `inlineDocument`",
        ),
        (
            {"template": INLINE, "foo": 1},
            "bad_request",
            "Unknown field `foo`: expected one of `template`, `input`",
        ),
        (
            {"template": {"kind": "inlineFragment", "inline": {"a": "{{ doc.t }}"}}},
            "feature_not_enabled",
            "error while fetching template: rendering an inline fragment requires enabling the `multimodal` "
            "experimental feature. See https://github.com/orgs/meilisearch/discussions/846",
        ),
    ],
)
def test_validation_errors(
    cluster: RunningCluster, enabled: None, body: Any, code: str, message: str
) -> None:
    assert_error(_render(cluster, body), code, message)


def test_inline_fragments_render_every_string_with_multimodal(cluster: RunningCluster, enabled: None) -> None:
    _features(cluster, multimodal=True)
    template = {"kind": "inlineFragment", "inline": {"text": "{{ doc.t }}!", "n": 3, "list": ["{{ doc.t }}"]}}
    body = {"template": template, "input": {"kind": "inlineDocument", "inline": {"t": "hi"}}}
    assert _render(cluster, body).json() == {
        "template": template["inline"],
        "rendered": {"text": "hi!", "n": 3, "list": ["hi"]},
    }


def test_flag_off_is_checked_after_the_body(cluster: RunningCluster) -> None:
    assert_error(_render(cluster, {}), "bad_request", "Missing field `template`")
    message = (
        "calling the /render-template route requires enabling the `render_route` experimental feature. "
        "See https://github.com/orgs/meilisearch/discussions/888"
    )
    assert_error(_render(cluster, {"template": INLINE}), "feature_not_enabled", message)


def test_needs_settings_get_and_documents_get_on_the_named_indexes(
    cluster: RunningCluster, enabled: None
) -> None:
    body = {"template": INLINE, "input": {"kind": "indexDocument", "indexUid": "books", "id": "1"}}
    both = create_key(cluster, actions=["settings.get", "documents.get"], indexes=["books"])["key"]
    assert _render(cluster, body, both).status_code == 200
    for actions in (["settings.get"], ["documents.get"]):
        key = create_key(cluster, actions=actions, indexes=["*"])["key"]
        response = _render(cluster, body, key)
        assert response.status_code == 403 and response.json()["code"] == "invalid_api_key", response.text
    elsewhere = {"template": INLINE, "input": {"kind": "indexDocument", "indexUid": "other", "id": "1"}}
    response = _render(cluster, elsewhere, both)
    assert response.status_code == 403 and response.json()["code"] == "invalid_api_key", response.text
    assert httpx.post(f"{cluster.url}/render-template", json=body).status_code == 401
