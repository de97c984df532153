"""Embedder settings as an index uses and shows them: each source's defaults filled in (search.md §6.11).

A user's embedder holds only the fields that were set; reads show the resolved configuration, with the
defaults of its source, its fields in one fixed order and the embedders by name, as the reference does.
"""

from __future__ import annotations

import copy
from typing import Any, Final

DEFAULT_SOURCE: Final = "openAi"
DEFAULT_DOCUMENT_TEMPLATE: Final = (
    "{% for field in fields %}{% if field.is_searchable and field.value != nil %}"
    "{{ field.name }}: {{ field.value }}\n{% endif %}{% endfor %}"
)
DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES: Final = 400
DEFAULT_OPENAI_MODEL: Final = "text-embedding-3-small"
DEFAULT_HUGGING_FACE_MODEL: Final = "BAAI/bge-base-en-v1.5"
DEFAULT_HUGGING_FACE_REVISION: Final = "617ca489d9e86b49b8167676d8220688b99db36e"
"""The revision of the default model; another model has no default revision."""

FIELD_ORDER: Final[tuple[str, ...]] = (
    "source",
    "model",
    "revision",
    "pooling",
    "apiKey",
    "dimensions",
    "binaryQuantized",
    "documentTemplate",
    "documentTemplateMaxBytes",
    "url",
    "indexingFragments",
    "searchFragments",
    "request",
    "response",
    "headers",
    "searchEmbedder",
    "indexingEmbedder",
    "distribution",
)
"""The order in which the reference lists an embedder's fields, whatever order they were sent in."""

_TEMPLATE: Final = {
    "documentTemplate": DEFAULT_DOCUMENT_TEMPLATE,
    "documentTemplateMaxBytes": DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES,
}
_FRAGMENTS: Final = ("indexingFragments", "searchFragments")
_SOURCE_DEFAULTS: Final[dict[str, dict[str, Any]]] = {
    "openAi": {"model": DEFAULT_OPENAI_MODEL, **_TEMPLATE},
    "huggingFace": {"model": DEFAULT_HUGGING_FACE_MODEL, "pooling": "useModel", **_TEMPLATE},
    "ollama": dict(_TEMPLATE),
    "rest": {**_TEMPLATE, "headers": {}},
    "userProvided": {},
    "composite": {},
}
"""What each source uses when a field is not set. Fields a source has no default for stay absent
(an OpenAI ``url`` or ``dimensions`` is the provider's, not shown)."""


def resolved_embedders(embedders: dict[str, Any]) -> dict[str, Any]:
    """Every embedder with its source's defaults, sorted by name."""
    return {name: resolved_embedder(embedders[name]) for name in sorted(embedders)}


def resolved_embedder(embedder: dict[str, Any], *, search_side: bool = False) -> dict[str, Any]:
    """One embedder with its source's defaults, fields in ``FIELD_ORDER`` (others after, as set).

    ``search_side``: the ``searchEmbedder`` of a composite embedder, which renders no documents and so
    has no document template.
    """
    source = embedder.get("source", DEFAULT_SOURCE)
    values: dict[str, Any] = {"source": source, **copy.deepcopy(_SOURCE_DEFAULTS.get(source, {})), **embedder}
    if source == "huggingFace" and values["model"] == DEFAULT_HUGGING_FACE_MODEL:
        values.setdefault("revision", DEFAULT_HUGGING_FACE_REVISION)
    for name in _FRAGMENTS:
        if values.get(name) == {}:
            del values[name]  # no fragments: shown as not set
    # Fragments (multimodal) render documents instead of a template.
    if search_side or any(name in values for name in _FRAGMENTS):
        for name in _TEMPLATE:
            if name not in embedder:
                values.pop(name, None)
    for side in ("searchEmbedder", "indexingEmbedder"):
        nested = values.get(side)
        if isinstance(nested, dict):
            values[side] = resolved_embedder(nested, search_side=side == "searchEmbedder")
    ordered: dict[str, Any] = {name: values.pop(name) for name in FIELD_ORDER if name in values}
    return {**ordered, **values}
