"""``_foreign(field, condition)`` filters (experimental feature ``foreignKeys``), resolved by the gateway.

The field must be one of the index's ``foreignKeys``; its foreign index is partitioned over every shard,
so no shard can join alone. Before a search or a document read goes to the shards, each ``_foreign``
is replaced in the filter text by ``"field" IN ["id", ...]``: the ids of the foreign documents that
match the condition, read from the shards like ``POST /documents/fetch``. The local index then checks
and evaluates the rewritten filter as any other (so ``field`` must be filterable there), and its errors
show the rewritten filter, as the reference's do.

Search hits are hydrated: a foreign key field's id (or each id of an array) becomes the foreign document
as that index displays it, ``{}`` when there is none, in the hit and in its ``_formatted``. Document
reads are not hydrated, as in the reference.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from typing import Any

import orjson
from sanic import Sanic

from common.documents.projection import select_attributes
from common.errors import ApiError
from common.filter.ast import And, Filter, Foreign, Not, Or
from common.filter.errors import FilterError, located
from common.filter.parse import parse_expression
from common.filter.permissions import check_experimental
from gateway.pages import merge_shard_pages

_MARK = "_foreign("
_ALL = 2**31
"""No page limit when reading the matching foreign documents."""


async def resolve_foreign(app: Sanic, uid: str, raw: Any, code: str) -> Any:
    """``raw`` (a ``filter`` parameter) with its ``_foreign`` conditions replaced; unchanged when it has
    none, when the feature is off (the shards then refuse it) or when it does not parse (the shards
    report the error). ``code`` is the route's filter error code."""
    if not app.ctx.features.enabled("foreignKeys") or _MARK not in repr(raw):
        return raw
    if isinstance(raw, list):  # the array form: strings, and arrays of strings
        return [await resolve_foreign(app, uid, item, code) for item in raw]
    if isinstance(raw, str):
        return await _resolve_text(app, uid, raw, code)
    return raw


async def _resolve_text(app: Sanic, uid: str, text: str, code: str) -> str:
    try:
        tree = parse_expression(text)
    except FilterError:
        return text
    joins = list(foreign_nodes(tree))
    if not joins:
        return text
    keys = {key["fieldName"]: key["foreignIndexUid"] for key in await _foreign_keys(app, uid)}
    pieces: list[str] = []
    done = 0
    for node in sorted(joins, key=lambda join: join.start):
        field = node.field.text
        if field not in keys:
            raise ApiError(code, f"Index `{uid}`: Field `{field}` is not a foreign key")
        if any(True for _ in foreign_nodes(node.condition)):
            raise ApiError(code, f"Index `{uid}`: Nested foreign filters are not supported")
        ids = await _matching_ids(app, keys[field], node.inner, text)
        pieces += [text[done : node.start], f"{_quoted(field)} IN [{', '.join(map(_quoted, ids))}]"]
        done = node.end
    return "".join([*pieces, text[done:]])


def foreign_nodes(tree: Filter | None) -> Iterator[Foreign]:
    """The ``_foreign`` conditions of a filter tree (not those inside another's condition)."""
    if isinstance(tree, (And, Or)):
        for child in tree.children:
            yield from foreign_nodes(child)
    elif isinstance(tree, Not):
        yield from foreign_nodes(tree.child)
    elif isinstance(tree, Foreign):
        yield tree


async def _foreign_keys(app: Sanic, uid: str) -> list[dict[str, str]]:
    settings = await app.ctx.cluster.ask_scheduler("GetSettings", {"uid": uid})
    keys: list[dict[str, str]] = settings.get("foreignKeys", [])
    return keys


async def _matching_ids(app: Sanic, foreign_uid: str, condition: str, text: str) -> list[str]:
    """Ids of the foreign index's documents matching ``condition`` (``text`` blanked around it); its
    errors name that index and show ``text``, the filter as it was written."""
    cluster = app.ctx.cluster
    index = await cluster.ask_scheduler("GetIndex", {"uid": foreign_uid})
    primary_key = index.get("primaryKey")
    if primary_key is None:
        return []
    query = {
        "index": foreign_uid,
        "offset": 0,
        "limit": _ALL,
        "ids": None,
        "filter": condition,
        "sort": None,
        **app.ctx.features.filters().params(),
    }
    try:
        replies = await cluster.ask_shards("GetDocuments", query)
    except ApiError as error:
        message = error.message
        if message.endswith(condition):
            message = message[: -len(condition)] + text
        if error.code == "invalid_document_filter" and not message.startswith("Index `"):
            message = f"Index `{foreign_uid}`: {message}"
        raise ApiError(error.code, message) from None
    documents = merge_shard_pages([reply["results"] for reply in replies], 0, _ALL)
    return [str(doc[primary_key]) for doc in documents if primary_key in doc]


def foreign_keys_soon(app: Sanic, uid: str) -> asyncio.Future[list[dict[str, str]]] | None:
    """The index's foreign keys, asked for now so that the round trip overlaps the search; None while
    the feature is off. The caller awaits or cancels it."""
    if not app.ctx.features.enabled("foreignKeys"):
        return None
    return asyncio.ensure_future(_foreign_keys(app, uid))


def drop(future: asyncio.Future[Any]) -> None:
    """Give up a ``foreign_keys_soon`` answer, whether it came (even as an error) or not."""
    future.cancel()
    future.add_done_callback(lambda done: done.cancelled() or done.exception())


async def hydrate(
    app: Sanic, uid: str, hits: list[Any], keys: Awaitable[list[dict[str, str]]] | None = None
) -> None:
    """Replace, in place, the foreign key fields of ``hits`` (of index ``uid``; objects, or JSON
    fragments as the shards sent them) by the foreign documents. ``keys``: from ``foreign_keys_soon``."""
    if keys is None:
        keys = foreign_keys_soon(app, uid)
    if keys is None:
        return
    if not hits:
        if isinstance(keys, asyncio.Future):
            drop(keys)
        return
    foreign = await keys
    if not foreign:
        return
    for position, hit in enumerate(hits):
        if isinstance(hit, orjson.Fragment):
            hits[position] = orjson.loads(orjson.dumps(hit))  # a Fragment does not expose its bytes
    for key in foreign:
        field = key["fieldName"]
        holders = [hit for hit in hits if field in hit]
        wanted = sorted({ident for hit in holders for ident in _ids(hit[field])})
        if not holders:
            continue
        documents = await _documents(app, key["foreignIndexUid"], wanted)
        for hit in holders:
            _hydrate_field(hit, field, documents)


_ABSENT: Any = object()


def _ids(value: Any, top: bool = True) -> list[str]:
    """The foreign ids a value holds: its strings, in nested arrays too; a number only as the whole
    value (the reference leaves numbers inside arrays alone)."""
    if isinstance(value, list):
        return [ident for item in value for ident in _ids(item, top=False)]
    if isinstance(value, str):
        return [value]
    if top and isinstance(value, int | float) and not isinstance(value, bool):
        return [_number_id(value)]
    return []


def _number_id(value: int | float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _hydrate_field(hit: dict[str, Any], field: str, documents: dict[str, dict[str, Any]]) -> None:
    formatted = hit.get("_formatted")
    shown = formatted.get(field, _ABSENT) if isinstance(formatted, dict) else _ABSENT
    value, shown = _hydrated(hit[field], shown, documents, top=True)
    hit[field] = value
    if shown is not _ABSENT and isinstance(formatted, dict):
        formatted[field] = shown


def _hydrated(value: Any, shown: Any, documents: dict[str, dict[str, Any]], top: bool) -> tuple[Any, Any]:
    """``value`` with its ids replaced by their documents (``{}`` when missing), and its ``_formatted``
    counterpart likewise where highlighting left the id as it was (a highlighted id stays highlighted)."""
    if isinstance(value, list):
        parallel = isinstance(shown, list) and len(shown) == len(value)
        pairs = [
            _hydrated(item, shown[i] if parallel else _ABSENT, documents, top=False)
            for i, item in enumerate(value)
        ]
        return [item for item, _ in pairs], ([text for _, text in pairs] if parallel else shown)
    ids = _ids(value, top)
    if not ids:
        return value, shown
    document = documents.get(ids[0], {})
    unchanged = shown is not _ABSENT and shown == (value if isinstance(value, str) else ids[0])
    return document, (document if unchanged else shown)


async def _documents(app: Sanic, foreign_uid: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The foreign index's documents with these ids, as its ``displayedAttributes`` show them."""
    cluster = app.ctx.cluster
    query = {"index": foreign_uid, "offset": 0, "limit": len(ids), "ids": ids, "filter": None, "sort": None}
    # One round: a missing index fails GetIndex (index_not_found), and then the rest is dropped.
    index, settings, replies = await asyncio.gather(
        cluster.ask_scheduler("GetIndex", {"uid": foreign_uid}),
        cluster.ask_scheduler("GetSettings", {"uid": foreign_uid}),
        cluster.ask_shards("GetDocuments", query) if ids else _no_replies(),
    )
    primary_key = index.get("primaryKey")
    if primary_key is None:
        return {}
    displayed = settings["displayedAttributes"]
    found = merge_shard_pages([reply["results"] for reply in replies], 0, len(ids))
    return {
        str(doc[primary_key]): doc if "*" in displayed else select_attributes(doc, displayed)
        for doc in found
        if primary_key in doc
    }


def refuse_foreign(tree: Filter | None, features_on: bool) -> None:
    """Routes that cannot join (delete by filter): the feature's error first, then the reference's."""
    for node in foreign_nodes(tree):
        if not features_on:
            check_experimental(node, contains_filter=True, multimodal=True, foreign_keys=False)
        message = located("Filter condition `_foreign` is not supported for this endpoint.", node.field.span)
        raise ApiError("invalid_document_filter", message)


async def _no_replies() -> list[Any]:
    return []


def _quoted(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
