"""``POST /render-template`` (flag ``renderRoute``): a template, from an index's settings or inline,
rendered with a document (from an index or inline) by the same renderer embedders use
(``common/document_template.py``), so the preview is what would be embedded.

The body is validated before the feature is checked, as the reference does; then the template is
fetched, then the input, each failure prefixed with the step that failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sanic import Blueprint, HTTPResponse, Request

from common.document_template import (
    DEFAULT_MAX_BYTES,
    DEFAULT_TEMPLATE,
    TemplateError,
    parse_template,
    render_document,
)
from common.errors import ApiError, invalid_index_uid
from common.validation import Kind, Schema, Spec
from gateway.auth.access import KeyAccess
from gateway.auth.requests import access_of, require_indexes
from gateway.auth.tenant import invalid_api_key
from gateway.features import RuntimeFeatures
from gateway.http.requests import is_valid_index_uid, json_body
from gateway.http.responses import json_response

bp = Blueprint("render")

_TEMPLATE_KINDS = (
    "documentTemplate", "chatDocumentTemplate", "indexingFragment", "searchFragment",
    "inlineDocumentTemplate", "inlineFragment",
)  # fmt: skip
_INPUT_KINDS = ("indexDocument", "inlineDocument", "inlineSearch")


def _index_uid(value: str) -> str | None:
    return None if is_valid_index_uid(value) else invalid_index_uid(value).message


_UID = Spec(Kind.STRING, nullable=True, check=_index_uid)
_BODY = Schema(
    {
        "template": Spec(
            Kind.OBJECT,
            required=True,
            code="invalid_render_template",
            schema=Schema(
                {
                    "kind": Spec(Kind.STRING, required=True, choices=_TEMPLATE_KINDS),
                    "indexUid": _UID,
                    "embedder": Spec(Kind.STRING, nullable=True),
                    "fragment": Spec(Kind.STRING, nullable=True),
                    "inline": Spec(Kind.ANY),
                    "documentTemplateMaxBytes": Spec(Kind.POSITIVE_INTEGER, nullable=True),
                }
            ),
        ),
        "input": Spec(
            Kind.OBJECT,
            nullable=True,
            code="invalid_render_input",
            schema=Schema(
                {
                    "kind": Spec(Kind.STRING, required=True, choices=_INPUT_KINDS),
                    "indexUid": _UID,
                    "id": Spec(Kind.STRING, nullable=True),
                    "inline": Spec(Kind.ANY),
                }
            ),
        ),
    }
)

# Per kind: the parameters it needs and the ones it refuses (named as the reference's messages do).
_TEMPLATE_PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "documentTemplate": (("indexUid", "embedder"), ("fragment", "inline")),
    "chatDocumentTemplate": (("indexUid",), ("embedder", "fragment", "inline")),
    "indexingFragment": (("indexUid", "embedder", "fragment"), ("inline", "documentTemplateMaxBytes")),
    "searchFragment": (("indexUid", "embedder", "fragment"), ("inline", "documentTemplateMaxBytes")),
    "inlineDocumentTemplate": (("inline",), ("indexUid", "embedder", "fragment")),
    "inlineFragment": (("inline",), ("indexUid", "embedder", "fragment", "documentTemplateMaxBytes")),
}
_INPUT_PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "indexDocument": (("indexUid", "id"), ("inline",)),
    "inlineDocument": (("inline",), ("indexUid", "id")),
    "inlineSearch": (("inline",), ("indexUid", "id")),
}
# Embedders whose vectors come from elsewhere than a rendered document (search.md §6.11).
_WITHOUT_TEMPLATE = frozenset({"userProvided", "composite"})
_SNAKE = {"indexUid": "index_uid", "documentTemplateMaxBytes": "document_template_max_bytes"}
_FEATURE_LINKS = {"multimodal": ("multimodal", 846), "chatCompletions": ("chat completions", 835)}


@dataclass(frozen=True)
class _Template:
    source: Any
    """A Liquid string, or for a fragment the JSON whose strings are Liquid."""
    max_bytes: int | None
    fragment: bool


def _check_params(
    kind: str, given: dict[str, Any], table: dict[str, Any], code: str, step: str, snake: bool
) -> None:
    needed, refused = table[kind]
    wrong = [(name, "missing") for name in needed if given.get(name) is None]
    wrong += [(name, "disallowed") for name in refused if given.get(name) is not None]
    if wrong:
        name, problem = wrong[0]
        shown = _SNAKE.get(name, name) if snake else name
        raise ApiError(code, f"error while fetching {step}: parameter `{shown}` {problem} for kind `{kind}`")


def _requires(features: RuntimeFeatures, feature: str, what: str, step: str) -> None:
    label, discussion = _FEATURE_LINKS[feature]
    features.require(
        feature,
        f"error while fetching {step}: {what} requires enabling the `{label}` experimental feature. "
        f"See https://github.com/orgs/meilisearch/discussions/{discussion}",
    )


async def _index_settings(request: Request, uid: str, prefix: str) -> dict[str, Any]:
    try:
        settings: dict[str, Any] = await request.app.ctx.cluster.ask_scheduler("GetSettings", {"uid": uid})
    except ApiError as error:
        if error.code == "index_not_found":
            raise ApiError("index_not_found", f"{prefix} `{uid}`: {error.message}") from None
        raise
    return settings


async def _fetch_template(request: Request, spec: dict[str, Any], features: RuntimeFeatures) -> _Template:
    kind = spec["kind"]
    if kind in ("indexingFragment", "searchFragment"):
        _requires(features, "multimodal", "accessing fragments", "template")
    elif kind == "inlineFragment":
        _requires(features, "multimodal", "rendering an inline fragment", "template")
    elif kind == "chatDocumentTemplate":
        _requires(features, "chatCompletions", "accessing chat settings", "template")
    _check_params(kind, spec, _TEMPLATE_PARAMS, "invalid_render_template", "template", snake=True)
    max_bytes = spec.get("documentTemplateMaxBytes")
    if kind == "inlineDocumentTemplate":
        if not isinstance(spec["inline"], str):
            raise ApiError(
                "invalid_render_template",
                "error while fetching template: inline document templates must be strings",
            )
        return _Template(spec["inline"], DEFAULT_MAX_BYTES if max_bytes is None else max_bytes, False)
    if kind == "inlineFragment":
        return _Template(spec["inline"], None, True)
    uid = spec["indexUid"]
    settings = await _index_settings(request, uid, "error while fetching template: cannot open index")
    if kind == "chatDocumentTemplate":
        chat = settings.get("chat") or {}
        source = chat.get("documentTemplate") or DEFAULT_TEMPLATE
        limit = chat.get("documentTemplateMaxBytes") or DEFAULT_MAX_BYTES
        return _Template(source, limit if max_bytes is None else max_bytes, False)
    embedder = (settings.get("embedders") or {}).get(spec["embedder"])
    if embedder is None:
        raise ApiError(
            "invalid_render_template",
            f"error while fetching template: cannot find embedder `{spec['embedder']}` in index `{uid}`",
        )
    if kind == "documentTemplate":
        if embedder.get("source") in _WITHOUT_TEMPLATE:
            raise ApiError(
                "invalid_render_template",
                f"error while fetching template: embedder `{spec['embedder']}` in index `{uid}` does not use "
                "a document template.",
            )
        source = embedder.get("documentTemplate") or DEFAULT_TEMPLATE
        limit = embedder.get("documentTemplateMaxBytes") or DEFAULT_MAX_BYTES
        return _Template(source, limit if max_bytes is None else max_bytes, False)
    group = "indexingFragments" if kind == "indexingFragment" else "searchFragments"
    fragment = (embedder.get(group) or {}).get(spec["fragment"])
    if fragment is None:
        raise ApiError(
            "invalid_render_template",
            f"error while fetching template: cannot find fragment `{spec['fragment']}` of embedder "
            f"`{spec['embedder']}` in index `{uid}`",
        )
    return _Template(fragment.get("value"), None, True)


async def _fetch_input(request: Request, spec: dict[str, Any], features: RuntimeFeatures) -> dict[str, Any]:
    kind = spec["kind"]
    if kind == "inlineSearch":
        _requires(features, "multimodal", "rendering search", "input")
    _check_params(kind, spec, _INPUT_PARAMS, "invalid_render_input", "input", snake=False)
    if kind != "indexDocument":
        inline = spec["inline"]
        if not isinstance(inline, dict):
            raise ApiError(
                "invalid_render_input",
                f"error while fetching input: parsing inline document: expected a JSON map, found "
                f"`{inline!r}`\n  - Note: the inline document must be a JSON map",
            )
        return inline
    uid, document_id = spec["indexUid"], spec["id"]
    await _index_settings(request, uid, "Cannot open index")
    document: dict[str, Any] | None = await request.app.ctx.cluster.get_document(uid, document_id)
    if document is None:
        raise ApiError(
            "render_document_not_found",
            f"error while fetching input: document `{document_id}` not found in `{uid}`",
        )
    return document


def _render(template: _Template, document: dict[str, Any]) -> Any:
    if template.fragment:
        return _render_fragment(template.source, document)
    return render_document(template.source, document, template.max_bytes)


def _render_fragment(value: Any, document: dict[str, Any]) -> Any:
    """A fragment is JSON whose strings are templates; ``doc`` is the document (or the search)."""
    if isinstance(value, str):
        return render_document(value, document, None)
    if isinstance(value, list):
        return [_render_fragment(item, document) for item in value]
    if isinstance(value, dict):
        return {key: _render_fragment(item, document) for key, item in value.items()}
    return value


def _require_documents_access(request: Request, body: dict[str, Any]) -> None:
    """The route needs ``settings.get`` (its declared action) and ``documents.get``, on every index
    it names."""
    access = access_of(request)
    if isinstance(access, KeyAccess) and "documents.get" not in access.key.actions:
        raise invalid_api_key()
    named = [part.get("indexUid") for part in (body["template"], body.get("input") or {})]
    require_indexes(request, [uid for uid in named if uid is not None])


@bp.post("/render-template", ctx_action="settings.get")
async def render_template(request: Request) -> HTTPResponse:
    body = _BODY.validate(json_body(request))
    features: RuntimeFeatures = request.app.ctx.features
    features.require(
        "renderRoute",
        "calling the /render-template route requires enabling the `render_route` experimental feature. "
        "See https://github.com/orgs/meilisearch/discussions/888",
    )
    _require_documents_access(request, body)
    template = await _fetch_template(request, body["template"], features)
    source = template.source
    if not template.fragment:
        # Parse before the input is fetched: a broken template is reported even without input.
        try:
            parse_template(source)
        except TemplateError as error:
            raise ApiError(
                "template_parsing_error", f"error while fetching template: user error: {error.message}"
            ) from None
    spec = body.get("input")
    if spec is None:
        return json_response({"template": source, "rendered": None})
    document = await _fetch_input(request, spec, features)
    try:
        rendered = _render(template, document)
    except TemplateError as error:
        code = "template_parsing_error" if error.parsing else "template_rendering_error"
        step = "fetching" if error.parsing else "rendering"
        raise ApiError(code, f"error while {step} template: user error: {error.message}") from None
    return json_response({"template": source, "rendered": rendered})
