# ruff: noqa: E501 - the expected messages are the reference's, wrapped where they allow it
"""Embedder settings are refused as the reference refuses them (search.md §6.11): what a body alone
shows wrong is a 400 when it is sent, what needs the stored embedders fails the task. Every expected
message below is the reference's (Meilisearch 1.50), asked with the same body."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.client import client_for, switch_features, wait_task
from tests.support.cluster import RunningCluster

CODE = "invalid_settings_embedders"
EMBEDDING = "vector_embedding_error"
FEATURE = "feature_not_enabled"
USER = {"source": "userProvided", "dimensions": 3}
OPENAI = {"source": "openAi"}
REST = {"source": "rest", "url": "http://127.0.0.1:9/e", "dimensions": 3}
FIELDS_TOP = (
    "`source`, `model`, `revision`, `pooling`, `apiKey`, `dimensions`, `binaryQuantized`, `documentTemplate`,"
    " `documentTemplateMaxBytes`, `url`, `indexingFragments`, `searchFragments`, `request`, `response`,"
    " `headers`, `searchEmbedder`, `indexingEmbedder`, `distribution`"
)
FIELDS_NESTED = (
    "`source`, `model`, `revision`, `pooling`, `apiKey`, `dimensions`, `documentTemplate`,"
    " `documentTemplateMaxBytes`, `url`, `indexingFragments`, `searchFragments`, `request`, `response`,"
    " `headers`, `distribution`, `binaryQuantized`, `searchEmbedder`, `indexingEmbedder`"
)
OPENAI_FIELDS = (
    "`source`, `model`, `apiKey`, `dimensions`, `documentTemplate`, `documentTemplateMaxBytes`, `url`,"
    " `distribution`, `binaryQuantized`"
)
USER_FIELDS = "`source`, `dimensions`, `distribution`, `binaryQuantized`"
SOURCES = "`openAi`, `huggingFace`, `ollama`, `userProvided`, `rest`, `composite`"
MODELS = '["text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large"]'
NO_TEXT = (
    'Error while generating embeddings: user error: in `request`: "{{text}}" not found\n  - Note: this'
    ' template is using a document template, and so expects to contain the placeholder "{{text}}" rather'
    ' than "{{fragment}}"'
)


def _unavailable(field: str, source: str, sources: str, fields: str, path: str = ".embedders.a") -> str:
    return (
        f"`{path}`: Field `{field}` unavailable for source `{source}`.\n  - note: `{field}` is available for"
        f" sources: {sources}\n  - note: available fields for source `{source}`: {fields}"
    )


def _missing(field: str, source: str) -> str:
    return f"`.embedders.a`: Missing field `{field}` (note: this field is mandatory for source `{source}`)"


# (embedders sent in PATCH /settings, code, message)
REFUSED: list[tuple[dict[str, Any], str, str]] = [
    # deserialisation: types, unknown fields, values
    (
        {"a": {"source": "foo"}},
        CODE,
        f"Unknown value `foo` at `.embedders.a.source`: expected one of {SOURCES}",
    ),
    (
        {"a": {"source": 1}},
        CODE,
        "Invalid value type at `.embedders.a.source`: expected a string, but found a positive integer: `1`",
    ),
    ({"a": {"bogus": 1}}, CODE, f"Unknown field `bogus` inside `.embedders.a`: expected one of {FIELDS_TOP}"),
    ({"a": []}, CODE, "Invalid value type at `.embedders.a`: expected an object, but found an array: `[]`"),
    (
        {"a": {"model": 1}},
        CODE,
        "Invalid value type at `.embedders.a.model`: expected a string, but found a positive integer: `1`",
    ),
    (
        {"a": {"pooling": "x"}},
        CODE,
        "Unknown value `x` at `.embedders.a.pooling`: expected one of `useModel`, `forceCls`, `forceMean`",
    ),
    (
        {"a": {"dimensions": -1}},
        CODE,
        "Invalid value type at `.embedders.a.dimensions`: expected a positive integer, but found a negative"
        " integer: `-1`",
    ),
    (
        {"a": {"dimensions": 1.5}},
        CODE,
        "Invalid value type at `.embedders.a.dimensions`: expected a positive integer, but found a number: `1.5`",
    ),
    (
        {"a": {"binaryQuantized": "x"}},
        CODE,
        'Invalid value type at `.embedders.a.binaryQuantized`: expected a boolean, but found a string: `"x"`',
    ),
    (
        {"a": {"documentTemplateMaxBytes": -1}},
        CODE,
        "Invalid value type at `.embedders.a.documentTemplateMaxBytes`: expected a positive integer, but found"
        " a negative integer: `-1`",
    ),
    (
        {"a": {"headers": {"h": 1}}},
        CODE,
        "Invalid value type at `.embedders.a.headers.h`: expected a string, but found a positive integer: `1`",
    ),
    (
        {"a": {"searchEmbedder": 1}},
        CODE,
        "Invalid value type at `.embedders.a.searchEmbedder`: expected an object, but found a positive integer:"
        " `1`",
    ),
    (
        {"a": {"searchEmbedder": {"bogus": 1}}},
        CODE,
        f"Unknown field `bogus` inside `.embedders.a.searchEmbedder`: expected one of {FIELDS_NESTED}",
    ),
    ({"a": {"distribution": {}}}, CODE, "Missing field `mean` inside `.embedders.a.distribution`"),
    (
        {"a": {"distribution": {"mean": 0.5, "sigma": 0.5, "x": 1}}},
        CODE,
        "Unknown field `x` inside `.embedders.a.distribution`: expected one of `mean`, `sigma`",
    ),
    (
        {"a": {"distribution": {"sigma": 0.5, "mean": 2}}},
        CODE,
        "Invalid value at `.embedders.a.distribution`: the distribution mean must be in the range [0, 1], got 2",
    ),
    (
        {"a": {"distribution": {"mean": -0.1, "sigma": 0.5}}},
        CODE,
        "Invalid value at `.embedders.a.distribution`: the distribution mean must be in the range [0, 1], got"
        " -0.1",
    ),
    (
        {"a": {"distribution": {"mean": 0.5, "sigma": 0}}},
        CODE,
        "Invalid value at `.embedders.a.distribution`: the distribution sigma must be in the range ]0, 1], got 0",
    ),
    (
        {"a": {"distribution": {"mean": 0.5, "sigma": 1.5}}},
        CODE,
        "Invalid value at `.embedders.a.distribution`: the distribution sigma must be in the range ]0, 1], got"
        " 1.5",
    ),
    # the body: zero dimensions, URLs and the request template, whatever the source
    ({"a": {"dimensions": 0}}, CODE, "`.embedders.a.dimensions`: `dimensions` cannot be zero"),
    (
        {"a": {"source": "openAi", "model": "nope", "dimensions": 0}},
        CODE,
        "`.embedders.a.dimensions`: `dimensions` cannot be zero",
    ),
    (
        {"a": {"source": "huggingFace", "url": "u"}},
        CODE,
        "`.embedders.a.url`: could not parse `u`: relative URL without a base",
    ),
    ({"a": {"url": "http://"}}, CODE, "`.embedders.a.url`: could not parse `http://`: empty host"),
    (
        {"a": {"url": "http://x:99999"}},
        CODE,
        "`.embedders.a.url`: could not parse `http://x:99999`: invalid port number",
    ),
    ({"a": {"source": "userProvided", "request": 1}}, EMBEDDING, NO_TEXT),
    (
        {"a": {"request": {"a": "{{text}}"}, "response": 1}},
        EMBEDDING,
        'Error while generating embeddings: user error: in `response`: "{{embedding}}" not found',
    ),
    # experimental features
    (
        {"a": {"source": "composite"}},
        FEATURE,
        'using `"composite"` as source requires enabling the `composite embedders` experimental feature. See'
        " https://github.com/orgs/meilisearch/discussions/816",
    ),
    (
        {"a": {**USER, "searchEmbedder": {"source": "userProvided"}}},
        FEATURE,
        "setting `searchEmbedder` requires enabling the `composite embedders` experimental feature. See"
        " https://github.com/orgs/meilisearch/discussions/816",
    ),
    (
        {"a": {**USER, "indexingFragments": {}}},
        FEATURE,
        "setting `indexingFragments` requires enabling the `multimodal` experimental feature. See"
        " https://github.com/orgs/meilisearch/discussions/846",
    ),
    # a sent source: its unavailable and mandatory fields, met in one walk over the fields
    ({"a": {"source": "userProvided"}}, CODE, _missing("dimensions", "userProvided")),
    ({"a": {"source": "ollama", "pooling": "useModel"}}, CODE, _missing("model", "ollama")),
    ({"a": {"source": "rest"}}, CODE, _missing("url", "rest")),
    ({"a": {"source": "rest", "url": "http://x"}}, CODE, _missing("request", "rest")),
    (
        {"a": {"source": "rest", "url": "http://x", "request": {"a": "{{text}}"}}},
        CODE,
        _missing("response", "rest"),
    ),
    (
        {"a": {**USER, "model": "x"}},
        CODE,
        _unavailable("model", "userProvided", "`openAi`, `huggingFace`, `ollama`", USER_FIELDS),
    ),
    (
        {"a": {"source": "userProvided", "pooling": "useModel", "revision": "r"}},
        CODE,
        _unavailable("revision", "userProvided", "`huggingFace`", USER_FIELDS),
    ),
    ({"a": {**USER, "headers": {}}}, CODE, _unavailable("headers", "userProvided", "`rest`", USER_FIELDS)),
    (
        {"a": {"source": "openAi", "model": "nope", "pooling": "useModel"}},
        CODE,
        _unavailable("pooling", "openAi", "`huggingFace`", OPENAI_FIELDS),
    ),
    (
        {"a": {"source": "huggingFace", "pooling": "forceMean", "apiKey": "k"}},
        CODE,
        _unavailable(
            "apiKey",
            "huggingFace",
            "`openAi`, `ollama`, `rest`",
            "`source`, `model`, `revision`, `pooling`, `documentTemplate`, `documentTemplateMaxBytes`,"
            " `distribution`, `binaryQuantized`",
        ),
    ),
    (
        {"a": {"source": "rest", "pooling": "useModel"}},
        CODE,
        _unavailable(
            "pooling",
            "rest",
            "`huggingFace`",
            "`source`, `apiKey`, `dimensions`, `documentTemplate`, `documentTemplateMaxBytes`, `url`,"
            " `indexingFragments`, `searchFragments`, `request`, `response`, `headers`, `distribution`,"
            " `binaryQuantized`",
        ),
    ),
    # OpenAI's models and dimensions named in the body
    (
        {"a": {"source": "openAi", "model": "nope"}},
        CODE,
        f"`.embedders.a.model`: Invalid model `nope` for OpenAI. Supported models: {MODELS}",
    ),
    (
        {"a": {"source": "openAi", "model": "text-embedding-ada-002", "dimensions": 5}},
        CODE,
        "`.embedders.a.dimensions`: Model `text-embedding-ada-002` does not support overriding its native"
        " dimensions of 1536. Found 5",
    ),
    (
        {"a": {"source": "openAi", "model": "text-embedding-3-large", "dimensions": 4000}},
        CODE,
        "`.embedders.a.dimensions`: Model `text-embedding-3-large` does not support overriding its dimensions"
        " to a value higher than 3072. Found 4000",
    ),
    # embedders are checked in name order
    (
        {"b": {"source": "openAi", "pooling": "useModel"}, "a": {"source": "openAi", "pooling": "useModel"}},
        CODE,
        _unavailable("pooling", "openAi", "`huggingFace`", OPENAI_FIELDS),
    ),
]

COMPOSITE_REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"source": "composite"}, _missing("searchEmbedder", "composite")),
    ({"source": "composite", "indexingEmbedder": OPENAI}, _missing("searchEmbedder", "composite")),
    ({"source": "composite", "searchEmbedder": OPENAI}, _missing("indexingEmbedder", "composite")),
    (
        {"source": "composite", "searchEmbedder": USER, "indexingEmbedder": OPENAI},
        "`.embedders.a.searchEmbedder.source`: Source `userProvided` is not available in a nested embedder",
    ),
    (
        {"source": "composite", "searchEmbedder": OPENAI, "indexingEmbedder": {"source": "composite"}},
        "`.embedders.a.indexingEmbedder.source`: Source `composite` is not available in a nested embedder",
    ),
    (
        {"source": "composite", "searchEmbedder": OPENAI, "indexingEmbedder": {"model": "m"}},
        "`.embedders.a.indexingEmbedder`: Missing field `source`.\n  - note: this field is mandatory for nested"
        " embedders",
    ),
    (
        {
            "source": "composite",
            "searchEmbedder": {**OPENAI, "documentTemplate": "x"},
            "indexingEmbedder": OPENAI,
        },
        "`.embedders.a.searchEmbedder`: Field `documentTemplate` unavailable for source `openAi` for the search"
        " embedder.\n  - note: available fields for source `openAi` for the search embedder: `source`, `model`,"
        " `apiKey`, `dimensions`, `url`\n  - note: `documentTemplate` is available when source `openAi` is not"
        " for the search embedder",
    ),
    (
        {
            "source": "composite",
            "searchEmbedder": {**OPENAI, "distribution": {"mean": 0.5, "sigma": 0.5}},
            "indexingEmbedder": OPENAI,
        },
        "`.embedders.a.searchEmbedder`: Field `distribution` unavailable for source `openAi` for the search"
        " embedder.\n  - note: available fields for source `openAi` for the search embedder: `source`, `model`,"
        " `apiKey`, `dimensions`, `url`\n  - note: `distribution` is available when source `openAi` is not for"
        " the search embedder",
    ),
    (
        {
            "source": "composite",
            "searchEmbedder": OPENAI,
            "indexingEmbedder": {**OPENAI, "binaryQuantized": True},
        },
        "`.embedders.a.indexingEmbedder`: Field `binaryQuantized` unavailable for source `openAi` for the"
        " indexing embedder.\n  - note: available fields for source `openAi` for the indexing embedder:"
        " `source`, `model`, `apiKey`, `dimensions`, `documentTemplate`, `documentTemplateMaxBytes`, `url`\n"
        "  - note: `binaryQuantized` is available when source `openAi` is not for the indexing embedder",
    ),
    (
        {
            "source": "composite",
            "searchEmbedder": OPENAI,
            "indexingEmbedder": {**OPENAI, "pooling": "useModel"},
        },
        "`.embedders.a.indexingEmbedder`: Field `pooling` unavailable for source `openAi` for the indexing"
        " embedder.\n  - note: `pooling` is available for sources: `huggingFace`\n  - note: available fields"
        " for source `openAi` for the indexing embedder: `source`, `model`, `apiKey`, `dimensions`,"
        " `documentTemplate`, `documentTemplateMaxBytes`, `url`",
    ),
    (
        {
            "source": "composite",
            "searchEmbedder": {**OPENAI, "searchEmbedder": {}},
            "indexingEmbedder": OPENAI,
        },
        "`.embedders.a.searchEmbedder`: Field `searchEmbedder` unavailable for source `openAi` for the search"
        " embedder.\n  - note: `searchEmbedder` is available for sources: `composite`\n  - note: available"
        " fields for source `openAi` for the search embedder: `source`, `model`, `apiKey`, `dimensions`, `url`",
    ),
    (
        # a nested embedder's own mandatory field is reported on the composite's path
        {
            "source": "composite",
            "searchEmbedder": {"source": "rest", "request": 1},
            "indexingEmbedder": OPENAI,
        },
        _missing("url", "rest"),
    ),
    (
        {"source": "composite", "model": "m", "searchEmbedder": OPENAI, "indexingEmbedder": OPENAI},
        _unavailable(
            "model",
            "composite",
            "`openAi`, `huggingFace`, `ollama`",
            "`source`, `searchEmbedder`, `indexingEmbedder`, `distribution`, `binaryQuantized`",
        ),
    ),
    (
        {"source": "openAi", "searchEmbedder": OPENAI},
        _unavailable("searchEmbedder", "openAi", "`composite`", OPENAI_FIELDS),
    ),
]

# (settings applied first, the update whose task fails, the task's error code and message)
TASK_FAILS: list[tuple[dict[str, Any], dict[str, Any], str, str]] = [
    (
        {},
        {"a": {"model": "foo"}},
        CODE,
        f"`.embedders.a.model`: Invalid model `foo` for OpenAI. Supported models: {MODELS}",
    ),
    (
        {},
        {"a": {"source": "openAi", "dimensions": 5000}},
        CODE,
        "`.embedders.a.dimensions`: Model `text-embedding-3-small` does not support overriding its dimensions"
        " to a value higher than 1536. Found 5000",
    ),
    (
        {},
        {"a": {"pooling": "useModel"}},
        CODE,
        _unavailable("pooling", "openAi", "`huggingFace`", OPENAI_FIELDS),
    ),
    ({"a": USER}, {"a": {"dimensions": None}}, CODE, _missing("dimensions", "userProvided")),
    (
        {"a": USER},
        {"a": {"model": "m"}},
        CODE,
        _unavailable("model", "userProvided", "`openAi`, `huggingFace`, `ollama`", USER_FIELDS),
    ),
    (
        {"a": {"source": "openAi", "model": "text-embedding-ada-002"}},
        {"a": {"dimensions": 5}},
        CODE,
        "`.embedders.a.dimensions`: Model `text-embedding-ada-002` does not support overriding its native"
        " dimensions of 1536. Found 5",
    ),
    (
        # a new source resets the previous source's fields, but not `apiKey`
        {"a": {"source": "openAi", "documentTemplate": "x", "apiKey": "abcdefgh"}},
        {"a": USER},
        CODE,
        _unavailable("apiKey", "userProvided", "`openAi`, `ollama`, `rest`", USER_FIELDS),
    ),
    (
        {"a": {**USER, "binaryQuantized": True}},
        {"a": {"binaryQuantized": False}},
        CODE,
        "`.embedders.a.binaryQuantized`: Cannot disable the binary quantization.\n - Note: Binary quantization"
        " is a lossy operation that cannot be reverted.\n - Hint: Add a new embedder that is non-quantized and"
        " regenerate the vectors.",
    ),
    (
        {},
        {f"e{i}": {"source": "userProvided", "dimensions": 2} for i in range(257)},
        CODE,
        "Too many embedders in the configuration. Found 257, but limited to 256.",
    ),
    (
        {},
        {"a": {"source": "ollama", "model": "m", "dimensions": 3, "url": "http://127.0.0.1:1/x"}},
        EMBEDDING,
        "Error while generating embeddings: user error: unsupported Ollama URL.\n  - For `ollama` sources, the"
        " URL must end with `/api/embed` or `/api/embeddings`\n  - Got `http://127.0.0.1:1/x`",
    ),
]


def _patch(cluster: RunningCluster, uid: str, body: Any, route: str = "settings") -> httpx.Response:
    return httpx.patch(f"{cluster.url}/indexes/{uid}/{route}", json=body, timeout=30)


def _assert_refused(response: httpx.Response, code: str, message: str) -> None:
    assert response.status_code == 400, response.text
    error = response.json()
    assert (error["code"], error["type"]) == (code, "invalid_request")
    assert error["message"] == message


@pytest.mark.parametrize(("embedders", "code", "message"), REFUSED)
def test_bodies_the_reference_refuses_are_400s(
    cluster: RunningCluster, embedders: dict[str, Any], code: str, message: str
) -> None:
    switch_features(cluster, compositeEmbedders=False, multimodal=False)
    _assert_refused(_patch(cluster, "refused", {"embedders": embedders}), code, message)


def test_the_sub_route_names_paths_from_its_own_root(cluster: RunningCluster) -> None:
    """Deserialisation errors start at the body's root; the later checks always say `.embedders`."""
    route = "settings/embedders"
    expected = f"Unknown value `foo` at `.a.source`: expected one of {SOURCES}"
    _assert_refused(_patch(cluster, "sub", {"a": {"source": "foo"}}, route), CODE, expected)
    expected = f"Unknown field `bogus` inside `.a`: expected one of {FIELDS_TOP}"
    _assert_refused(_patch(cluster, "sub", {"a": {"bogus": 1}}, route), CODE, expected)
    _assert_refused(
        _patch(cluster, "sub", {"a": {"source": "userProvided"}}, route),
        CODE,
        _missing("dimensions", "userProvided"),
    )
    expected = "`.embedders.a.dimensions`: `dimensions` cannot be zero"
    _assert_refused(_patch(cluster, "sub", {"a": {"dimensions": 0}}, route), CODE, expected)


@pytest.mark.parametrize(("embedder", "message"), COMPOSITE_REFUSED)
def test_composite_embedders_rules(cluster: RunningCluster, embedder: dict[str, Any], message: str) -> None:
    switch_features(cluster, compositeEmbedders=True)
    _assert_refused(_patch(cluster, "composite", {"embedders": {"a": embedder}}), CODE, message)


@pytest.mark.parametrize(("first", "update", "code", "message"), TASK_FAILS)
def test_what_needs_the_stored_embedders_fails_the_task(
    cluster: RunningCluster, first: dict[str, Any], update: dict[str, Any], code: str, message: str
) -> None:
    uid = f"task-fails-{TASK_FAILS.index((first, update, code, message))}"
    url = f"{cluster.url}/indexes/{uid}/settings/embedders"
    if first:
        assert (
            wait_task(cluster, _patch(cluster, uid, {"embedders": first}).json()["taskUid"])["status"]
            == "succeeded"
        )
    before = httpx.get(url).json() if first else {}
    response = _patch(cluster, uid, {"embedders": update})
    assert response.status_code == 202, response.text
    task = wait_task(cluster, response.json()["taskUid"])
    assert task["status"] == "failed"
    assert task["error"] == {
        "message": f"Index `{uid}`: {message}",
        "code": code,
        "type": "invalid_request",
        "link": f"https://docs.meilisearch.com/errors#{code}",
    }
    if first:
        assert httpx.get(url).json() == before, "a failed task changes nothing"


def test_a_new_source_keeps_only_api_key_distribution_and_quantization(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("source-change")
    first = {"a": {**USER, "distribution": {"mean": 0.5, "sigma": 0.5}, "binaryQuantized": True}}
    assert wait_task(cluster, index.update_embedders(first).task_uid)["status"] == "succeeded"
    assert wait_task(cluster, index.update_embedders({"a": OPENAI}).task_uid)["status"] == "succeeded"
    shown = httpx.get(f"{cluster.url}/indexes/source-change/settings/embedders").json()["a"]
    assert "dimensions" not in shown
    assert (shown["source"], shown["binaryQuantized"]) == ("openAi", True)
    assert shown["distribution"] == {"mean": 0.5, "sigma": 0.5}
    # the same source sent again resets nothing; a template goes with its source
    patch = {"a": {"source": "openAi", "documentTemplate": "x"}}
    assert wait_task(cluster, index.update_embedders(patch).task_uid)["status"] == "succeeded"
    assert wait_task(cluster, index.update_embedders({"a": OPENAI}).task_uid)["status"] == "succeeded"
    shown = httpx.get(f"{cluster.url}/indexes/source-change/settings/embedders").json()["a"]
    assert shown["documentTemplate"] == "x"
    plain = {"a": {**USER, "binaryQuantized": None, "distribution": None}}
    assert wait_task(cluster, index.update_embedders(plain).task_uid)["status"] == "succeeded"
    shown = httpx.get(f"{cluster.url}/indexes/source-change/settings/embedders").json()
    assert shown == {"a": USER}, "null turns quantization off, which false may not"


def test_bodies_the_reference_accepts(cluster: RunningCluster) -> None:
    """Accepted when sent and when run: a zero template budget, an unchecked URL scheme, 256 embedders."""
    index = client_for(cluster).index("accepted")
    many = {f"e{i}": {"source": "userProvided", "dimensions": 2} for i in range(256)}
    for embedders in (
        {"a": {"source": "openAi", "documentTemplateMaxBytes": 0}},
        {"a": {"source": "openAi", "model": "text-embedding-ada-002", "dimensions": 1536, "url": "ftp:/a"}},
        {"a": None, **many},
    ):
        task = wait_task(cluster, index.update_embedders(embedders).task_uid)
        assert task["status"] == "succeeded", task
    assert len(httpx.get(f"{cluster.url}/indexes/accepted/settings/embedders").json()) == 256
