"""Multimodal fragments (search.md §6.11, experimental ``multimodal``): what a ``rest`` embedder with
``indexingFragments`` / ``searchFragments`` sends at its request's ``"{{fragment}}"``.

A fragment's ``value`` is JSON whose strings are Liquid templates. It *renders* for a context when
every variable it names exists there (a ``null`` value exists and prints nothing):

- indexing: ``doc`` is the document; each fragment that renders gives the document one embedding,
  in the order of the fragments' names; the others are skipped for that document;
- search: ``q`` (when the query has one, blank included) and ``media``; exactly one search fragment
  must render, else the query fails as the reference's does ("matches no search fragment", "matches
  multiple search fragments", naming the first two in name order).

A rendered fragment travels as its JSON text, so the batch's texts, hashes and caches stay strings;
``RestEmbedder`` decodes it into the request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from liquid.exceptions import LiquidError, UndefinedError

from common.document_template import TemplateError, parse_template
from common.settings.embedder_fragments import declared, uses_fragments
from shard.embedding.base import EmbeddingError

__all__ = ["indexing_inputs", "search_input", "uses_fragments"]

_VECTORS = "_vectors"


class _Unrendered(Exception):
    """A fragment names a variable its context lacks."""


def indexing_inputs(config: Mapping[str, Any], document: Mapping[str, Any]) -> list[str]:
    """The JSON texts of the indexing fragments that render for ``document``, by fragment name."""
    context = {"doc": {name: value for name, value in document.items() if name != _VECTORS}}
    inputs = []
    for name in declared(config, "indexingFragments"):
        try:
            inputs.append(_dumps(_render(config["indexingFragments"][name]["value"], context)))
        except _Unrendered:
            continue
    return inputs


def search_input(config: Mapping[str, Any], q: str | None, media: Any) -> str:
    """The JSON text of the one search fragment that renders for the query; raises the reference's
    ``EmbeddingError`` when none or several do, or when the embedder has no fragments to render
    ``media`` with."""
    if not uses_fragments(config):
        raise EmbeddingError("`media` requested but the configuration doesn't have source `rest`")
    context: dict[str, Any] = {"media": media}
    if q is not None:
        context["q"] = q
    shown = orjson.dumps({"q": q, "media": media}).decode()
    matched: list[tuple[str, Any]] = []
    for name in declared(config, "searchFragments"):
        try:
            matched.append((name, _render(config["searchFragments"][name]["value"], context)))
        except _Unrendered:
            continue
    if not matched:
        raise EmbeddingError(f"Query matches no search fragment.\n  - Note: {shown}")
    if len(matched) > 1:
        raise EmbeddingError(
            f"Query matches multiple search fragments.\n  - Note: First matched fragment `{matched[0][0]}`."
            f"\n  - Note: Second matched fragment `{matched[1][0]}`.\n  - Note: {shown}"
        )
    return _dumps(matched[0][1])


def _render(value: Any, context: dict[str, Any]) -> Any:
    """``value`` with each string rendered; raises ``_Unrendered`` at the first missing variable."""
    if isinstance(value, str):
        try:
            return parse_template(value).render(**context)
        except UndefinedError:
            raise _Unrendered from None
        except (LiquidError, TemplateError) as error:
            raise EmbeddingError(f"error while rendering a fragment: {error}") from None
    if isinstance(value, list):
        return [_render(item, context) for item in value]
    if isinstance(value, dict):
        return {key: _render(item, context) for key, item in value.items()}
    return value


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()
