"""Multimodal fragments of a ``rest`` embedder (search.md §6.11, experimental ``multimodal``): the checks
the reference makes on ``indexingFragments`` / ``searchFragments``, with its codes, messages and timing.

A fragment map is ``{name: {"value": any JSON} | null}``; a PATCH merges it by name (``null`` removes
one fragment, a ``null`` map removes them all). An embedder *uses fragments* when either map declares
one (a non-null entry); its ``request`` template then holds ``"{{fragment}}"`` instead of ``"{{text}}"``.

* The sent body (400): a document template beside declared fragments; each fragment's strings parse
  as Liquid; the ``request`` template in the mode the body declares. A body that declares none may be
  completed by stored fragments, so its ``request`` passes with either placeholder. The order of these
  checks and of the source's field walk follows the reference (``check_sent_templates``).
* The merged embedder (the task fails): both maps declare fragments or neither does, then the
  ``request`` template in the mode the merged embedder is in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from common.document_template import PARSE_ERROR_PREFIX, TemplateError, parse_template
from common.errors import ApiError
from common.rest_templates import (
    EMBEDDING_ERROR_PREFIX,
    FRAGMENT,
    TEXT,
    RestTemplateError,
    parse_request_template,
    parse_rest_templates,
)
from common.validation import Kind, Schema, Spec

SIDES: Final = ("indexingFragments", "searchFragments")
FRAGMENTS_SPEC: Final = Spec(
    Kind.OBJECT,
    nullable=True,
    values=Spec(
        Kind.OBJECT,
        nullable=True,
        schema=Schema({"value": Spec(Kind.ANY, required=True, nullable=True)}, ignore_unknown=True),
    ),
)
"""A fragment map as deserialised: name -> ``{"value": ...}`` (other keys ignored) or ``null``."""
_USER_ERROR: Final = f"{EMBEDDING_ERROR_PREFIX}user error: "


def declared(embedder: Mapping[str, Any], side: str) -> list[str]:
    """The names of the fragments ``side`` declares (non-null entries), sorted."""
    fragments = embedder.get(side) or {}
    return sorted(name for name, fragment in fragments.items() if fragment is not None)


def uses_fragments(embedder: Mapping[str, Any]) -> bool:
    return any(declared(embedder, side) for side in SIDES)


def merge_fragments(stored: Mapping[str, Any] | None, sent: Mapping[str, Any]) -> dict[str, Any]:
    """A fragment map after a PATCH: sent fragments replace stored ones by name, ``null`` removes one."""
    merged = dict(stored or {})
    for name, fragment in sent.items():
        if fragment is None:
            merged.pop(name, None)
        else:
            merged[name] = fragment
    return merged


def check_sent_templates(embedder: Mapping[str, Any]) -> None:
    """Before the source's field walk: a document template beside fragments; then, when the body sends
    a ``request``, its fragments' Liquid and its templates in the mode it declares. A body that declares
    no fragment may be completed by stored ones: its ``request`` may hold either placeholder."""
    counts = [len(declared(embedder, side)) for side in SIDES]
    if embedder.get("documentTemplate") is not None and any(counts):
        # `search_fragments_len` is the reference's own wording.
        raise _embedding_error(
            "cannot pass both fragments and a document template.\n"
            f"  - Note: {counts[0]} fragments declared in `indexingFragments` and {counts[1]} fragments"
            " declared in `search_fragments_len`.\n"
            "  - Hint: remove the declared fragments or remove the `documentTemplate`"
        )
    request = embedder.get("request")
    if request is None:
        return
    placeholder = FRAGMENT
    if any(counts):
        check_sent_fragments(embedder)
    else:
        try:
            _check_templates(request, None, TEXT)
            placeholder = TEXT
        except ApiError as text_error:
            try:
                _check_templates(request, None, FRAGMENT)
            except ApiError:
                raise text_error from None
    _check_templates(request, embedder.get("response"), placeholder)


def check_sent_fragments(embedder: Mapping[str, Any]) -> None:
    """Each declared fragment's strings parse as Liquid (after the field walk when no ``request`` is
    sent, as the reference does)."""
    for side in SIDES:
        for name in declared(embedder, side):
            _check_liquid(embedder[side][name]["value"], f".{side}.{name}", root=True)


def check_built_rest(embedder: Mapping[str, Any]) -> None:
    """A merged ``rest`` embedder as the reference builds it: consistent fragments, then its templates
    in the mode the fragments give."""
    indexing, search = (declared(embedder, side) for side in SIDES)
    if bool(indexing) != bool(search):
        empty, full, names = ("searchFragments", "indexingFragments", indexing)
        indent = " "  # the reference indents this hint by one space, the other one by two
        if search:
            empty, full, names, indent = "indexingFragments", "searchFragments", search, "  "
        raise _embedding_error(
            f"inconsistent fragments: `{empty}` is empty, but `{full}` declares {len(names)} fragments:"
            f" {', '.join(names)}\n{indent}- Hint: declare at least one fragment in `{empty}` or remove"
            f" fragments from `{full}` by setting them to `null`"
        )
    _check_templates(embedder["request"], embedder["response"], FRAGMENT if indexing else TEXT)


def _check_liquid(value: Any, path: str, *, root: bool) -> None:
    """Every string inside a fragment's value must parse as Liquid; the path is shown below the root."""
    if isinstance(value, str):
        try:
            parse_template(value)
        except TemplateError as error:
            where = "" if root else f"in ``{path}``, "
            detail = error.message.removeprefix(PARSE_ERROR_PREFIX)
            raise _embedding_error(f"{where}error while parsing template: {detail}") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_liquid(item, f"{path}.{key}", root=False)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_liquid(item, f"{path}[{index}]", root=False)


def _check_templates(request: Any, response: Any, placeholder: str) -> None:
    try:
        if response is None:
            parse_request_template(request, placeholder)
        else:
            parse_rest_templates(request, response, placeholder)
    except RestTemplateError as error:
        raise ApiError("vector_embedding_error", error.message) from None


def _embedding_error(detail: str) -> ApiError:
    return ApiError("vector_embedding_error", _USER_ERROR + detail)
