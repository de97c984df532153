"""Documents of one index: stored values, the external -> internal id mapping, and reads.

``_insert`` and ``_remove`` are the only places a document enters or leaves the store; indexing
concerns that must follow every document (postings, facets) hook in there with the same context.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from shard.index.codec import DocumentCodec
from shard.index.context import WriteContext
from shard.index.env import (
    StoreEnv,
    Txn,
    decode_u32,
    document_id_of,
    document_key,
    encode_u32,
    external_key,
    index_prefix,
)
from shard.index.state import IndexState, load_state

Document = dict[str, Any]


def put_documents(
    ctx: WriteContext,
    index_id: int,
    documents: Iterable[Sequence[Any]],
    *,
    merge: bool,
    skip_creation: bool,
) -> int:
    """Write ``[external_id, document]`` pairs in order; returns how many were written.

    ``merge`` updates top-level fields of an existing document in place (new ones appended); otherwise
    the document is replaced whole. A later duplicate of an id therefore wins, or merges on top.
    """
    state = ctx.state(index_id)
    written = 0
    for external_id, document in documents:
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
        state.release(doc_id)
        deleted += 1
    return deleted


def _insert(ctx: WriteContext, state: IndexState, index_id: int, doc_id: int, document: Document) -> None:
    value = ctx.codec.encode(document)
    ctx.txn.put(document_key(index_id, doc_id), value, db=ctx.env.documents)
    state.raw_size += len(value)
    state.count_fields(document, +1)
    ctx.indexer(index_id).index(state, doc_id, document)


def _remove(ctx: WriteContext, state: IndexState, index_id: int, doc_id: int) -> Document:
    """Drop the stored value and its counts; returns the document it held. The id stays allocated."""
    value = ctx.txn.pop(document_key(index_id, doc_id), db=ctx.env.documents)
    if value is None:
        raise LookupError(f"internal document {doc_id} of index {index_id} is mapped but not stored")
    document: Document = ctx.codec.decode(value)
    state.raw_size -= len(value)
    state.count_fields(document, -1)
    ctx.indexer(index_id).unindex(doc_id)
    return document


def reindex_documents(ctx: WriteContext, index_id: int) -> None:
    """Rebuild the index's postings and token records from its stored documents, in id order."""
    ctx.wipe_searchable(index_id)
    ctx.forget_indexer(index_id)
    state = ctx.state(index_id)
    indexer = ctx.indexer(index_id)
    prefix = index_prefix(index_id)
    cursor = ctx.txn.cursor(ctx.env.documents)
    positioned = cursor.set_range(prefix)
    while positioned and cursor.key().startswith(prefix):
        ctx.tick()
        indexer.index(state, document_id_of(cursor.key()), ctx.codec.decode(cursor.value()))
        positioned = cursor.next()


def read_document(
    env: StoreEnv, codec: DocumentCodec, txn: Txn, index_id: int, external_id: str
) -> Document | None:
    packed = txn.get(external_key(index_id, external_id), db=env.external_ids)
    if packed is None:
        return None
    value = txn.get(document_key(index_id, decode_u32(packed)), db=env.documents)
    return None if value is None else codec.decode(value)


def read_documents(
    env: StoreEnv,
    codec: DocumentCodec,
    txn: Txn,
    index_id: int,
    offset: int,
    limit: int,
    external_ids: Iterable[str] | None,
) -> tuple[list[tuple[int, Document]], int]:
    """A page of documents in internal id order, and how many documents matched in total."""
    if external_ids is not None:
        return _read_selected(env, codec, txn, index_id, offset, limit, external_ids)
    live = load_state(env, txn, index_id).live
    total = len(live)
    page: list[tuple[int, Document]] = []
    if offset >= total or limit <= 0:
        return page, total
    prefix = index_prefix(index_id)
    cursor = txn.cursor(env.documents)
    # Selecting the offset-th live id skips straight to the page instead of walking past `offset` keys.
    positioned = cursor.set_range(document_key(index_id, live[offset]))
    while positioned and len(page) < limit and cursor.key().startswith(prefix):
        page.append((document_id_of(cursor.key()), codec.decode(cursor.value())))
        positioned = cursor.next()
    return page, total


def _read_selected(
    env: StoreEnv,
    codec: DocumentCodec,
    txn: Txn,
    index_id: int,
    offset: int,
    limit: int,
    external_ids: Iterable[str],
) -> tuple[list[tuple[int, Document]], int]:
    doc_ids = set()
    for external_id in external_ids:
        packed = txn.get(external_key(index_id, external_id), db=env.external_ids)
        if packed is not None:
            doc_ids.add(decode_u32(packed))
    page: list[tuple[int, Document]] = []
    for doc_id in sorted(doc_ids)[offset : offset + max(limit, 0)]:
        value = txn.get(document_key(index_id, doc_id), db=env.documents)
        if value is not None:
            page.append((doc_id, codec.decode(value)))
    return page, len(doc_ids)
