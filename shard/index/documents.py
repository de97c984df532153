"""Documents of one index: stored values, the external -> internal id mapping, and reads.

``_insert`` and ``_remove`` are the only places a document enters or leaves the store; indexing
concerns that must follow every document (postings, facets) hook in there with the same context.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson
from pyroaring import BitMap

from shard.index.blocks import iter_values, read_value
from shard.index.codec import DocumentCodec
from shard.index.context import WriteContext
from shard.index.env import (
    StoreEnv,
    Txn,
    decode_u32,
    encode_u32,
    external_key,
)
from shard.index.facet_rules import FacetChange
from shard.index.facets import FacetIndexer
from shard.index.sequence import SequenceWriter, delete_sequence, read_sequences, sequence_of
from shard.index.shapes import ShapeWriter
from shard.index.state import IndexState, load_state

Document = dict[str, Any]


def put_documents(
    ctx: WriteContext,
    index_id: int,
    documents: Iterable[Sequence[Any]],
    *,
    task_uid: int,
    merge: bool,
    skip_creation: bool,
) -> int:
    """Write ``[external_id, document, position in the task's payload]`` entries in order; returns how
    many were written.

    ``merge`` updates top-level fields of an existing document in place (new ones appended); otherwise
    the document is replaced whole. A later duplicate of an id therefore wins, or merges on top. Either
    way an existing document keeps its internal id and sequence; a created one gets its sequence from
    the task and position.
    """
    state = ctx.state(index_id)
    sequences = SequenceWriter(ctx.env, ctx.txn)
    written = 0
    for external_id, document, position in documents:
        ctx.tick()
        key = external_key(index_id, external_id)
        packed = ctx.txn.get(key, db=ctx.env.external_ids)
        if packed is not None:
            doc_id = decode_u32(packed)
            previous = _remove(ctx, state, index_id, doc_id)
            _insert(ctx, state, index_id, doc_id, {**previous, **document} if merge else document)
        elif not skip_creation:
            doc_id = state.allocate()
            ctx.txn.put(key, encode_u32(doc_id), db=ctx.env.external_ids)
            sequences.put(index_id, doc_id, sequence_of(task_uid, position))
            _insert(ctx, state, index_id, doc_id, document)
        else:
            continue
        written += 1
    return written


def delete_documents(ctx: WriteContext, index_id: int, external_ids: Iterable[str]) -> int:
    """Returns how many of the ids existed."""
    state = ctx.state(index_id)
    deleted = 0
    for external_id in external_ids:
        ctx.tick()
        packed = ctx.txn.pop(external_key(index_id, external_id), db=ctx.env.external_ids)
        if packed is None:
            continue
        doc_id = decode_u32(packed)
        _remove(ctx, state, index_id, doc_id)
        delete_sequence(ctx.env, ctx.txn, index_id, doc_id)
        state.live.remove(doc_id)
        for hook in ctx.on_delete:
            hook(index_id, doc_id)
        deleted += 1
    return deleted


def _insert(ctx: WriteContext, state: IndexState, index_id: int, doc_id: int, document: Document) -> None:
    value = orjson.dumps(document)
    ctx.documents.put(index_id, doc_id, value)
    state.raw_size += len(value)
    state.count_fields(document, +1)
    ctx.fields(index_id).add(document)
    ctx.indexer(index_id).index(state, doc_id, document)
    ctx.facet_indexer(index_id).index(state, doc_id, document)


def _remove(ctx: WriteContext, state: IndexState, index_id: int, doc_id: int) -> Document:
    """Drop the stored value and its counts; returns the document it held. The id stays allocated."""
    value = ctx.documents.pop(index_id, doc_id)
    if value is None:
        raise LookupError(f"internal document {doc_id} of index {index_id} is mapped but not stored")
    document: Document = orjson.loads(value)
    state.raw_size -= len(value)
    state.count_fields(document, -1)
    ctx.indexer(index_id).unindex(state, doc_id)
    ctx.facet_indexer(index_id).unindex(state, doc_id, document)
    return document


def reindex_documents(
    ctx: WriteContext,
    index_id: int,
    *,
    searchable: bool,
    facets: FacetChange | None,
    shapes: bool | None = None,
) -> None:
    """Rebuild the index's postings and token records and/or bring its facet values and ``_geojson``
    shapes to new settings, from its stored documents, in id order, in one pass over them.

    Facet values change only where the faceted paths do: values of paths no longer faceted are
    deleted by key range, and the pass extracts only the newly faceted paths (it is skipped when the
    change can only drop paths, e.g. a removed rule). ``shapes``: True when ``_geojson`` became
    filterable (the pass stores every shape), False when it no longer is (shapes are deleted)."""
    if searchable:
        ctx.wipe_searchable(index_id)
    state = ctx.state(index_id)
    if facets is not None:
        dropped = [field_id for field_id, path in enumerate(state.facet_fields) if facets.dropped(path)]
        ctx.drop_facet_fields(index_id, dropped)
    ctx.forget_indexer(index_id)
    ctx.documents.flush()
    indexer = ctx.indexer(index_id)
    facet_indexer = None if facets is None or facets.none else FacetIndexer(index_id, facets, ctx.deltas)
    if shapes is False:
        ctx.wipe_shapes(index_id)
    shape_writer = ShapeWriter(ctx.txn, ctx.env.shapes, index_id) if shapes else None
    if not searchable and facet_indexer is None and shape_writer is None:
        return
    for doc_id, value in iter_values(ctx.txn, ctx.env.documents, ctx.codec, index_id):
        ctx.tick()
        document = orjson.loads(value)
        if searchable:
            indexer.index(state, doc_id, document)
        if facet_indexer is not None:
            facet_indexer.index(state, doc_id, document)
        if shape_writer is not None:
            shape_writer.write(doc_id, document)


def read_document(
    env: StoreEnv, codec: DocumentCodec, txn: Txn, index_id: int, external_id: str
) -> Document | None:
    packed = txn.get(external_key(index_id, external_id), db=env.external_ids)
    if packed is None:
        return None
    return read_by_id(env, codec, txn, index_id, decode_u32(packed))


def read_by_id(env: StoreEnv, codec: DocumentCodec, txn: Txn, index_id: int, doc_id: int) -> Document | None:
    value = read_value(txn, env.documents, codec, index_id, doc_id)
    return None if value is None else orjson.loads(value)


def read_documents(
    env: StoreEnv,
    codec: DocumentCodec,
    txn: Txn,
    index_id: int,
    offset: int,
    limit: int,
    external_ids: Iterable[str] | None,
    matching: BitMap | None = None,
) -> tuple[list[tuple[int, Document]], int]:
    """A page of ``(sequence, document)`` in insertion order, and how many documents matched in total.

    Internal id order is sequence order, so the page is read in id order and carries the sequences
    the gateway merges the shards' pages by. ``matching`` (a filter's result) narrows the documents.
    """
    live = load_state(env, txn, index_id).live
    if external_ids is not None or matching is not None:
        selected = selected_ids(env, txn, index_id, external_ids, matching, live)
        return _read_ids(env, codec, txn, index_id, selected[offset : offset + max(limit, 0)]), len(selected)
    total = len(live)
    page: list[tuple[int, Document]] = []
    if offset >= total or limit <= 0:
        return page, total
    # Selecting the offset-th live id skips straight to the page instead of walking past `offset` ids.
    for doc_id, value in iter_values(txn, env.documents, codec, index_id, live[offset]):
        page.append((doc_id, orjson.loads(value)))
        if len(page) >= limit:
            break
    return _with_sequences(env, txn, index_id, page), total


def selected_ids(
    env: StoreEnv,
    txn: Txn,
    index_id: int,
    external_ids: Iterable[str] | None,
    matching: BitMap | None,
    live: BitMap,
) -> BitMap:
    """The internal ids a read selects: the existing ``external_ids`` if given, within ``matching``
    (a filter's result) if given; every live document when neither is."""
    if external_ids is None:
        return live if matching is None else matching
    doc_ids = BitMap()
    for external_id in external_ids:
        packed = txn.get(external_key(index_id, external_id), db=env.external_ids)
        if packed is not None:
            doc_ids.add(decode_u32(packed))
    return doc_ids if matching is None else doc_ids & matching


def _read_ids(
    env: StoreEnv, codec: DocumentCodec, txn: Txn, index_id: int, doc_ids: BitMap
) -> list[tuple[int, Document]]:
    page: list[tuple[int, Document]] = []
    for doc_id in doc_ids:
        document = read_by_id(env, codec, txn, index_id, doc_id)
        if document is not None:
            page.append((doc_id, document))
    return _with_sequences(env, txn, index_id, page)


def _with_sequences(
    env: StoreEnv, txn: Txn, index_id: int, page: list[tuple[int, Document]]
) -> list[tuple[int, Document]]:
    """``(doc id, document)`` pairs as ``(sequence, document)``."""
    sequences = read_sequences(env, txn, index_id, [doc_id for doc_id, _ in page])
    return [(sequence, document) for sequence, (_, document) in zip(sequences, page, strict=True)]
