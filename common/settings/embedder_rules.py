"""The rules of embedder settings (search.md §6.11), with the reference's codes, messages and timing.

Three moments, as in the reference:

* deserialisation (``EMBEDDERS_SPEC``): each field's type, unknown fields, ``source`` and ``pooling``
  values, ``distribution`` ranges; in body order, a 400;
* the sent body (``check_sent_embedders``, still a 400): experimental features, the document template's
  Liquid, ``dimensions`` of 0, URLs, the REST ``request`` template; then, only for an embedder whose
  ``source`` is sent, which fields that source allows or needs and the OpenAI model and dimensions the
  body names; then multimodal fragments (``embedder_fragments``);
* the merged settings, when the task runs (``check_merged_embedders``, the task fails): the same source
  rules on what the embedder now is, everything the body alone could not tell (a stored source, a
  model not sent), the count of embedders and ``binaryQuantized`` that cannot be turned off.

Embedders are checked in name order (the reference keeps them in a sorted map); fields in ``_FIELDS``
order, where a missing mandatory field and an unavailable one are met in the same walk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from common.document_template import TemplateError, parse_template
from common.errors import ApiError, index_prefix
from common.rest_templates import EMBEDDING_ERROR_PREFIX
from common.settings.embedder_fragments import (
    FRAGMENTS_SPEC,
    SIDES,
    check_built_rest,
    check_sent_fragments,
    check_sent_templates,
    merge_fragments,
)
from common.settings.embedders import DEFAULT_OPENAI_MODEL, DEFAULT_SOURCE, FIELD_ORDER
from common.validation import Kind, Schema, Spec

CODE: Final = "invalid_settings_embedders"
MAX_EMBEDDERS: Final = 256
SOURCES: Final = ("openAi", "huggingFace", "ollama", "userProvided", "rest", "composite")
_NESTED_SIDES: Final = ("searchEmbedder", "indexingEmbedder")
_FIELDS: Final = (
    "source", "model", "revision", "pooling", "apiKey", "dimensions", "documentTemplate",
    "documentTemplateMaxBytes", "url", "indexingFragments", "searchFragments", "request", "response",
    "headers", "searchEmbedder", "indexingEmbedder", "distribution", "binaryQuantized",
)  # fmt: skip
"""The order of the reference's walk over an embedder's fields and of its "available fields" lists."""
_TEMPLATE_FIELDS: Final = ("documentTemplate", "documentTemplateMaxBytes")
_EVERY_SOURCE: Final = ("source", "distribution", "binaryQuantized")
_REST_ONLY: Final = ("indexingFragments", "searchFragments", "request", "response", "headers")
_ALLOWED: Final[dict[str, frozenset[str]]] = {
    "openAi": frozenset({*_EVERY_SOURCE, "model", "apiKey", "dimensions", *_TEMPLATE_FIELDS, "url"}),
    "huggingFace": frozenset({*_EVERY_SOURCE, "model", "revision", "pooling", *_TEMPLATE_FIELDS}),
    "ollama": frozenset({*_EVERY_SOURCE, "model", "apiKey", "dimensions", *_TEMPLATE_FIELDS, "url"}),
    "userProvided": frozenset({*_EVERY_SOURCE, "dimensions"}),
    "rest": frozenset({*_EVERY_SOURCE, "apiKey", "dimensions", *_TEMPLATE_FIELDS, "url", *_REST_ONLY}),
    "composite": frozenset({*_EVERY_SOURCE, *_NESTED_SIDES}),
}
_MANDATORY: Final[dict[str, tuple[str, ...]]] = {
    "ollama": ("model",),
    "userProvided": ("dimensions",),
    "rest": ("url", "request", "response"),
    "composite": _NESTED_SIDES,
}
_KEPT_ACROSS_SOURCES: Final = frozenset({"apiKey", "distribution", "binaryQuantized"})
"""What an embedder keeps when its ``source`` changes; every other field goes back to its default."""
_OPENAI_MODELS: Final = {
    "text-embedding-ada-002": 1536,
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
}
_FIXED_DIMENSIONS: Final = frozenset({"text-embedding-ada-002"})
_OLLAMA_ENDINGS: Final = ("/api/embeddings", "/api/embed")
_FEATURES: Final = {
    "composite": ("compositeEmbedders", "composite embedders", "816"),
    "multimodal": ("multimodal", "multimodal", "846"),
}
_SPECIAL_SCHEMES: Final = frozenset({"http", "https", "ws", "wss", "ftp"})
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")

Enabled = Callable[[str], bool]
"""Whether an experimental feature is on."""


def NO_FEATURE(feature: str) -> bool:
    return False


def _distribution_range(distribution: dict[str, float]) -> str | None:
    mean, sigma = distribution["mean"], distribution["sigma"]
    if not 0 <= mean <= 1:
        return f"the distribution mean must be in the range [0, 1], got {_number(mean)}"
    if not 0 < sigma <= 1:
        return f"the distribution sigma must be in the range ]0, 1], got {_number(sigma)}"
    return None


def _number(value: float) -> str:
    """As Rust displays an f32: no ``.0`` on whole numbers."""
    return str(int(value)) if value.is_integer() else repr(value)


def _field_specs(nested: Spec | None) -> dict[str, Spec]:
    def text(**extra: Any) -> Spec:
        return Spec(Kind.STRING, nullable=True, **extra)

    return {
        "source": text(choices=SOURCES),
        "model": text(),
        "revision": text(),
        "pooling": text(choices=("useModel", "forceCls", "forceMean")),
        "apiKey": text(),
        "dimensions": Spec(Kind.POSITIVE_INTEGER, nullable=True),
        "binaryQuantized": Spec(Kind.BOOLEAN, nullable=True),
        "documentTemplate": text(),
        "documentTemplateMaxBytes": Spec(Kind.POSITIVE_INTEGER, nullable=True),
        "url": text(),
        "indexingFragments": FRAGMENTS_SPEC,
        "searchFragments": FRAGMENTS_SPEC,
        "request": Spec(Kind.ANY, nullable=True),
        "response": Spec(Kind.ANY, nullable=True),
        "headers": Spec(Kind.OBJECT, nullable=True, values=Spec(Kind.STRING)),
        "searchEmbedder": nested or Spec(Kind.OBJECT, nullable=True),
        "indexingEmbedder": nested or Spec(Kind.OBJECT, nullable=True),
        "distribution": Spec(
            Kind.OBJECT,
            nullable=True,
            schema=Schema(
                {"mean": Spec(Kind.NUMBER, required=True), "sigma": Spec(Kind.NUMBER, required=True)}
            ),
            check=_distribution_range,
        ),
    }


def _ordered(specs: dict[str, Spec], order: tuple[str, ...]) -> Schema:
    return Schema({name: specs[name] for name in order})


_NESTED_ORDER: Final = (
    *(name for name in _FIELDS if name not in (*_NESTED_SIDES, "distribution", "binaryQuantized")),
    "distribution", "binaryQuantized", *_NESTED_SIDES,
)  # fmt: skip
"""A nested embedder's fields, in the order its "expected one of" list names them."""
_NESTED_SPEC: Final = Spec(Kind.OBJECT, nullable=True, schema=_ordered(_field_specs(None), _NESTED_ORDER))
EMBEDDERS_SPEC: Final = Spec(
    Kind.OBJECT,
    code=CODE,
    values=Spec(Kind.OBJECT, nullable=True, schema=_ordered(_field_specs(_NESTED_SPEC), FIELD_ORDER)),
)
"""``embedders`` as deserialised: name -> embedder or ``null`` (the count is a task-time check)."""


def check_sent_embedders(embedders: Mapping[str, Any], enabled: Enabled) -> None:
    """The checks the reference makes on a body before enqueuing it (400s)."""
    for name in sorted(embedders):
        embedder = embedders[name]
        if embedder is None:
            continue
        _check_features(embedder, enabled)
        path = f".embedders.{name}"
        if embedder.get("documentTemplate") is not None:
            _check_document_template(embedder["documentTemplate"], f"{path}.documentTemplate")
        if embedder.get("dimensions") == 0:
            raise ApiError(CODE, f"`{path}.dimensions`: `dimensions` cannot be zero")
        if embedder.get("url") is not None:
            _check_url(embedder["url"], f"{path}.url")
        check_sent_templates(embedder)
        if embedder.get("source") is not None:
            _walk(embedder, embedder["source"], path)
            _check_values(embedder, path, merged=False)
        check_sent_fragments(embedder)


def check_merged_embedders(
    before: Mapping[str, Any], after: Mapping[str, Any], update: Mapping[str, Any], index_uid: str | None
) -> None:
    """The checks that need the stored settings, run as the task is processed; the task fails with
    the index named before the message."""
    prefix = index_prefix(index_uid)
    if len(after) > MAX_EMBEDDERS:
        raise ApiError(
            CODE,
            f"{prefix}Too many embedders in the configuration. Found {len(after)}, but limited to"
            f" {MAX_EMBEDDERS}.",
        )
    for name in sorted(update):
        sent = update[name]
        if sent is None:
            continue
        path = f".embedders.{name}"
        try:
            if before.get(name, {}).get("binaryQuantized") and sent.get("binaryQuantized") is False:
                raise ApiError(
                    CODE,
                    f"`{path}.binaryQuantized`: Cannot disable the binary quantization.\n"
                    " - Note: Binary quantization is a lossy operation that cannot be reverted.\n"
                    " - Hint: Add a new embedder that is non-quantized and regenerate the vectors.",
                )
            embedder = after[name]
            source = embedder.get("source", DEFAULT_SOURCE)
            _walk(embedder, source, path)
            _check_values({"source": source, **embedder}, path, merged=True)
            _check_embedder_can_be_built(embedder, source)
        except ApiError as error:
            raise ApiError(error.code, prefix + error.message) from None


def merge_embedder(stored: dict[str, Any], sent: dict[str, Any]) -> dict[str, Any]:
    """One embedder after a PATCH: fields set, ``null`` reset, absent kept; a new ``source`` first
    resets what belongs to the previous one (all but ``apiKey``, ``distribution``, ``binaryQuantized``)."""
    source = sent.get("source")
    if source is not None and source != stored.get("source", DEFAULT_SOURCE):
        stored = {name: value for name, value in stored.items() if name in _KEPT_ACROSS_SOURCES}
    merged = dict(stored)
    for name, value in sent.items():
        if value is None:
            merged.pop(name, None)
        elif name in SIDES:
            merged[name] = merge_fragments(merged.get(name), value)
        else:
            merged[name] = value
    return merged


def _check_features(embedder: Mapping[str, Any], enabled: Enabled) -> None:
    if embedder.get("source") == "composite":
        _require(enabled, "composite", 'using `"composite"` as source')
    for side in _NESTED_SIDES:
        if embedder.get(side) is not None:
            _require(enabled, "composite", f"setting `{side}`")
    for fragments in SIDES:
        if embedder.get(fragments) is not None:
            _require(enabled, "multimodal", f"setting `{fragments}`")


def _require(enabled: Enabled, which: str, what: str) -> None:
    feature, words, discussion = _FEATURES[which]
    if not enabled(feature):
        raise ApiError(
            "feature_not_enabled",
            f"{what} requires enabling the `{words}` experimental feature. "
            f"See https://github.com/orgs/meilisearch/discussions/{discussion}",
        )


def _walk(embedder: Mapping[str, Any], source: str, path: str) -> None:
    """Fields the source refuses and mandatory fields missing, whichever comes first in ``_FIELDS``."""
    allowed = _ALLOWED[source]
    for field in _FIELDS:
        present = embedder.get(field) is not None
        if present and field not in allowed:
            raise ApiError(
                CODE,
                f"`{path}`: Field `{field}` unavailable for source `{source}`.\n"
                f"  - note: `{field}` is available for sources: {_sources_with(field)}\n"
                f"  - note: available fields for source `{source}`: {_listed(allowed)}",
            )
        if not present and field in _MANDATORY.get(source, ()):
            raise ApiError(
                CODE,
                f"`{path}`: Missing field `{field}` (note: this field is mandatory for source `{source}`)",
            )
        if present and field in _NESTED_SIDES:
            _walk_nested(embedder[field], field, path)


def _walk_nested(nested: Mapping[str, Any], side: str, parent: str) -> None:
    """A composite's search or indexing embedder: any source but ``userProvided`` and ``composite``,
    never ``distribution`` nor ``binaryQuantized``, and no document template on the search side.
    A mandatory field it lacks is reported on the parent's path, as the reference does."""
    path = f"{parent}.{side}"
    source = nested.get("source")
    if source is None:
        raise ApiError(
            CODE, f"`{path}`: Missing field `source`.\n  - note: this field is mandatory for nested embedders"
        )
    if source in ("userProvided", "composite"):
        raise ApiError(CODE, f"`{path}.source`: Source `{source}` is not available in a nested embedder")
    role = "search" if side == "searchEmbedder" else "indexing"
    refused = {"distribution", "binaryQuantized", *(_TEMPLATE_FIELDS if role == "search" else ())}
    allowed = _ALLOWED[source] - refused
    where = f"source `{source}` for the {role} embedder"
    for field in _FIELDS:
        present = nested.get(field) is not None
        if present and field not in allowed:
            if field in _ALLOWED[source]:
                notes = (
                    f"  - note: available fields for {where}: {_listed(allowed)}\n"
                    f"  - note: `{field}` is available when source `{source}` is not for the {role} embedder"
                )
            else:
                notes = (
                    f"  - note: `{field}` is available for sources: {_sources_with(field)}\n"
                    f"  - note: available fields for {where}: {_listed(allowed)}"
                )
            raise ApiError(CODE, f"`{path}`: Field `{field}` unavailable for {where}.\n{notes}")
        if not present and field in _MANDATORY.get(source, ()):
            raise ApiError(
                CODE,
                f"`{parent}`: Missing field `{field}` (note: this field is mandatory for source `{source}`)",
            )


def _check_values(embedder: Mapping[str, Any], path: str, *, merged: bool) -> None:
    """OpenAI's models and their dimensions: a ``merged`` embedder's (the task's) with its default
    model, a body's only as it names them. A composite's sides are left to their embedders when they
    are built (the reference goes on to embed with a side whose model is unknown)."""
    source = embedder["source"]
    model = embedder.get("model", DEFAULT_OPENAI_MODEL if merged else None)
    if source == "openAi" and model is not None:
        if model not in _OPENAI_MODELS:
            supported = ", ".join(f'"{name}"' for name in _OPENAI_MODELS)
            raise ApiError(
                CODE, f"`{path}.model`: Invalid model `{model}` for OpenAI. Supported models: [{supported}]"
            )
        dimensions, native = embedder.get("dimensions"), _OPENAI_MODELS[model]
        if dimensions is not None and model in _FIXED_DIMENSIONS and dimensions != native:
            raise ApiError(
                CODE,
                f"`{path}.dimensions`: Model `{model}` does not support overriding its native dimensions of"
                f" {native}. Found {dimensions}",
            )
        if dimensions is not None and dimensions > native:
            raise ApiError(
                CODE,
                f"`{path}.dimensions`: Model `{model}` does not support overriding its dimensions to a value"
                f" higher than {native}. Found {dimensions}",
            )


def _check_embedder_can_be_built(embedder: Mapping[str, Any], source: str) -> None:
    """What the reference finds when it builds the embedder: worded as an embedding error."""
    if source == "rest":
        check_built_rest(embedder)
    url = embedder.get("url")
    if source == "ollama" and url is not None and not url.endswith(_OLLAMA_ENDINGS):
        raise ApiError(
            "vector_embedding_error",
            f"{EMBEDDING_ERROR_PREFIX}user error: unsupported Ollama URL.\n"
            "  - For `ollama` sources, the URL must end with `/api/embed` or `/api/embeddings`\n"
            f"  - Got `{url}`",
        )


def _check_document_template(template: str, path: str) -> None:
    try:
        parse_template(template)
    except TemplateError as error:
        raise ApiError(CODE, f"`{path}`: Invalid template: user error: {error.message}.") from None


def _check_url(url: str, path: str) -> None:
    problem = _url_problem(url)
    if problem is not None:
        raise ApiError(CODE, f"`{path}`: could not parse `{url}`: {problem}")


def _url_problem(url: str) -> str | None:
    """The WHATWG parser's complaint about an absolute URL, for the mistakes users make (no scheme,
    no host, a bad port), worded as the reference's ``url`` crate words them."""
    scheme = _SCHEME.match(url)
    if scheme is None:
        return "relative URL without a base"
    if scheme.group()[:-1].lower() not in _SPECIAL_SCHEMES:
        return None
    authority = re.split(r"[/?#\\]", url[scheme.end() :].lstrip("/\\"), maxsplit=1)[0]
    host = authority.rpartition("@")[2]
    if host.startswith("["):
        host, _, port = host.partition("]")[2].partition(":")
        host = "ipv6"
    else:
        host, _, port = host.partition(":")
    if not host:
        return "empty host"
    if port and (not port.isdigit() or int(port) > 65535):
        return "invalid port number"
    return None


def _sources_with(field: str) -> str:
    return ", ".join(f"`{source}`" for source in SOURCES if field in _ALLOWED[source])


def _listed(fields: frozenset[str]) -> str:
    return ", ".join(f"`{field}`" for field in _FIELDS if field in fields)
