"""Embedder settings are shown resolved (search.md §6.11): each source's defaults, fields in the
reference's order, embedders by name; the task's details keep what was sent."""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path
from typing import Any

import httpx

from tests.support.client import client_for, wait_task
from tests.support.cluster import RunningCluster

TEMPLATE = (
    "{% for field in fields %}{% if field.is_searchable and field.value != nil %}"
    "{{ field.name }}: {{ field.value }}\n{% endif %}{% endfor %}"
)
DEFAULT_TEMPLATE = {"documentTemplate": TEMPLATE, "documentTemplateMaxBytes": 400}
MINILM_HUB = "sentence-transformers/all-MiniLM-L6-v2"

REST_BATCH = {
    "source": "rest",
    "url": "http://127.0.0.1:9/a",
    "request": {"input": ["{{text}}", "{{..}}"]},
    "response": {"data": ["{{embedding}}", "{{..}}"]},
    "dimensions": 3,
}
FRAGMENTS = {
    "indexingFragments": {"t": {"value": {"input": "{{doc.title}}"}}},
    "searchFragments": {"q": {"value": {"input": "{{q}}"}}},
}
REST_SHOWN = {
    "source": "rest",
    "dimensions": 3,
    "url": "http://127.0.0.1:9/a",
    "request": REST_BATCH["request"],
    "response": REST_BATCH["response"],
    "headers": {},
}
REST_TEMPLATED = {"source": "rest", "dimensions": 3, **DEFAULT_TEMPLATE, **REST_SHOWN}
"""The same embedder rendering documents: the default template, in its place among the fields."""
SENT: dict[str, Any] = {
    "manual": {"dimensions": 3, "source": "userProvided"},
    "rest": {
        "response": {"data": "{{embedding}}"},
        "request": {"input": "{{text}}"},
        "url": "http://127.0.0.1:9/embed",
        "dimensions": 3,
        "source": "rest",
    },
    "open": {"apiKey": "sk-abcdefghijklmnopqrstuvwxyz0123456789"},
    "large": {"source": "openAi", "model": "text-embedding-3-large", "dimensions": 256},
    "llama": {"source": "ollama", "model": "nomic-embed-text", "dimensions": 4},
    "hf-other": {
        "source": "huggingFace",
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "pooling": "forceMean",
    },
    "tuned": {
        "distribution": {"mean": 0.7, "sigma": 0.1},
        "documentTemplateMaxBytes": 100,
        "documentTemplate": "{{doc.title}}",
        "binaryQuantized": True,
        "source": "rest",
        "headers": {"X-Team": "search"},
        "url": "http://127.0.0.1:9/",
        "request": ["{{text}}", "{{..}}"],
        "response": ["{{embedding}}", "{{..}}"],
        "dimensions": 2,
    },
}
SHOWN: dict[str, Any] = {
    "hf-other": {
        "source": "huggingFace",
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "pooling": "forceMean",
        **DEFAULT_TEMPLATE,
    },
    "large": {"source": "openAi", "model": "text-embedding-3-large", "dimensions": 256, **DEFAULT_TEMPLATE},
    "llama": {"source": "ollama", "model": "nomic-embed-text", "dimensions": 4, **DEFAULT_TEMPLATE},
    "manual": {"source": "userProvided", "dimensions": 3},
    "open": {
        "source": "openAi",
        "model": "text-embedding-3-small",
        "apiKey": "sk-abXXXXXX...",
        **DEFAULT_TEMPLATE,
    },
    "rest": {
        **REST_TEMPLATED,
        "url": "http://127.0.0.1:9/embed",
        "request": {"input": "{{text}}"},
        "response": {"data": "{{embedding}}"},
    },
    "tuned": {
        "source": "rest",
        "dimensions": 2,
        "binaryQuantized": True,
        "documentTemplate": "{{doc.title}}",
        "documentTemplateMaxBytes": 100,
        "url": "http://127.0.0.1:9/",
        "request": ["{{text}}", "{{..}}"],
        "response": ["{{embedding}}", "{{..}}"],
        "headers": {"X-Team": "search"},
        "distribution": {"mean": 0.7, "sigma": 0.1},
    },
}


SENT_MULTIMODAL: dict[str, Any] = {
    "both": {"source": "composite", "searchEmbedder": REST_BATCH, "indexingEmbedder": REST_BATCH},
    "frag": {
        **REST_BATCH,
        **FRAGMENTS,
        "request": {"input": "{{fragment}}"},
        "response": {"data": "{{embedding}}"},
    },
    "nofrag": {**REST_BATCH, "indexingFragments": {}, "searchFragments": {}},
}
SHOWN_MULTIMODAL: dict[str, Any] = {
    # the search side renders no documents: no template there
    "both": {"source": "composite", "searchEmbedder": REST_SHOWN, "indexingEmbedder": REST_TEMPLATED},
    # fragments replace the template
    "frag": {
        "source": "rest",
        "dimensions": 3,
        "url": "http://127.0.0.1:9/a",
        **FRAGMENTS,
        "request": {"input": "{{fragment}}"},
        "response": {"data": "{{embedding}}"},
        "headers": {},
    },
    # empty fragment maps are as good as none
    "nofrag": REST_TEMPLATED,
}


def _ordered(value: Any) -> Any:
    """JSON with every object's key order made visible (dict equality ignores it)."""
    if isinstance(value, dict):
        return [(key, _ordered(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    return value


def test_reads_fill_in_each_source_defaults_in_the_reference_order(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("embedder-defaults")
    task = wait_task(cluster, index.update_embedders(SENT).task_uid)
    assert task["status"] == "succeeded", task
    details = task["details"]["embedders"]
    assert details["manual"] == SENT["manual"], "details keep what was sent"
    assert details["llama"] == SENT["llama"]
    assert details["open"] == {"apiKey": "sk-abXXXXXX..."}
    url = f"{cluster.url}/indexes/embedder-defaults/settings"
    shown = httpx.get(f"{url}/embedders").json()
    assert _ordered(shown) == _ordered(SHOWN)
    assert _ordered(httpx.get(url).json()["embedders"]) == _ordered(SHOWN)
    # set / null-reset / absent-keep inside an embedder: a reset field shows its default again
    patch = {"tuned": {"documentTemplate": None, "documentTemplateMaxBytes": None, "headers": None}}
    assert wait_task(cluster, index.update_embedders(patch).task_uid)["status"] == "succeeded"
    tuned = httpx.get(f"{url}/embedders").json()["tuned"]
    reset = (tuned["documentTemplate"], tuned["documentTemplateMaxBytes"], tuned["headers"])
    assert reset == (TEMPLATE, 400, {})
    assert tuned["distribution"] == {"mean": 0.7, "sigma": 0.1}


def test_composite_and_fragment_embedders_show_what_renders_documents(cluster: RunningCluster) -> None:
    """As the reference shows them (checked with a local embedding server it could reach)."""
    features = {"compositeEmbedders": True, "multimodal": True}
    assert httpx.patch(f"{cluster.url}/experimental-features", json=features).status_code == 200
    index = client_for(cluster).index("embedder-multimodal")
    task = wait_task(cluster, index.update_embedders(SENT_MULTIMODAL).task_uid)
    assert task["status"] == "succeeded", task
    shown = httpx.get(f"{cluster.url}/indexes/embedder-multimodal/settings/embedders").json()
    assert _ordered(shown) == _ordered(SHOWN_MULTIMODAL)


def test_the_client_reads_the_resolved_settings(cluster: RunningCluster) -> None:
    index = client_for(cluster).index("embedder-client")
    wait_task(cluster, index.update_embedders({"rest": SENT["rest"]}).task_uid)
    got = index.get_embedders()
    assert got is not None
    rest = got.embedders["rest"]
    assert (rest.document_template, rest.document_template_max_bytes) == (TEMPLATE, 400)


def _embedders_task(cluster: RunningCluster, uid: str, embedders: dict[str, Any]) -> dict[str, Any]:
    return wait_task(cluster, client_for(cluster).index(uid).update_embedders(embedders).task_uid, timeout=60)


def test_a_local_model_that_is_not_there_fails_the_settings_task(cluster: RunningCluster) -> None:
    """Loaded when the setting changes, not at the first document: the default model of the
    ``huggingFace`` source is not shipped, and models are never downloaded."""
    wait_task(cluster, client_for(cluster).create_index("hf-missing").task_uid)
    task = _embedders_task(cluster, "hf-missing", {"hf": {"source": "huggingFace"}})
    assert task["status"] == "failed", task
    assert task["error"]["code"] == "vector_embedding_error"
    assert task["error"]["message"].startswith(
        "Index `hf-missing`: Error while generating embeddings: user error: Model `BAAI/bge-base-en-v1.5` is"
        " not available: models are never downloaded."
    )
    assert httpx.get(f"{cluster.url}/indexes/hf-missing/settings/embedders").json() == {}


def test_a_revision_is_served_only_by_files_that_name_it(cluster: RunningCluster, tmp_path: Path) -> None:
    """The packaged MiniLM does not say which hub revision it is; a Hugging Face cache snapshot does
    (its directory name, and the branches in ``refs/``)."""
    packaged = {"source": "huggingFace", "model": MINILM_HUB}
    task = _embedders_task(cluster, "hf-revision", {"hf": {**packaged, "revision": "abc"}})
    assert task["status"] == "failed", task
    assert task["error"]["message"].startswith(
        f"Index `hf-revision`: Error while generating embeddings: user error: Model `{MINILM_HUB}` at"
        " revision `abc` is not available: the packaged model ships one unnamed revision"
    )

    commit = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
    repository = tmp_path / "models--sentence-transformers--all-MiniLM-L6-v2"
    snapshot = repository / "snapshots" / commit
    snapshot.mkdir(parents=True)
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    assert spec is not None and spec.submodule_search_locations
    with zipfile.ZipFile(Path(next(iter(spec.submodule_search_locations))) / "model.zip") as packaged_zip:
        packaged_zip.extractall(snapshot)
    (repository / "refs").mkdir()
    (repository / "refs" / "main").write_text(commit)

    local = {"source": "huggingFace", "model": str(snapshot)}
    task = _embedders_task(cluster, "hf-revision", {"hf": {**local, "revision": "v9"}})
    assert task["status"] == "failed", task
    assert f"holds revision `{commit}`" in task["error"]["message"]
    task = _embedders_task(cluster, "hf-revision", {"hf": {**local, "revision": "main"}})
    assert task["status"] == "succeeded", task
    shown = httpx.get(f"{cluster.url}/indexes/hf-revision/settings/embedders").json()["hf"]
    assert (shown["model"], shown["revision"]) == (str(snapshot), "main")
