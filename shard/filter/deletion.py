"""Delete by filter (core.md §3.3): a shard removes its own documents matching the filter, at batch time."""

from __future__ import annotations

from typing import Any

from common.documents import extract_document_id
from common.features import FilterFeatures
from shard.filter.apply import FilterScope, filter_documents
from shard.index.context import WriteContext
from shard.index.documents import delete_documents, read_by_id
from shard.index.settings import load_settings


def delete_by_filter(ctx: WriteContext, index_id: int, index_uid: str, operation: dict[str, Any]) -> int:
    """Returns how many documents were deleted. Raises ``ApiError`` (``invalid_document_filter``) for a
    filter the index's settings refuse, or ``feature_not_enabled`` for CONTAINS or ``_vectors`` without
    their feature (as it was when the task was registered).

    The batch's pending writes are flushed first so the filter sees every earlier task of the batch.
    """
    ctx.deltas.flush()
    ctx.documents.flush()
    state = ctx.state(index_id)
    scope = FilterScope(
        ctx.env, ctx.txn, index_id, index_uid, load_settings(ctx.env, ctx.txn, index_id), state
    )
    features = FilterFeatures.from_params(operation)
    matching = filter_documents(scope, operation["filter"], code="invalid_document_filter", features=features)
    primary_key = operation["primaryKey"]
    if not matching or primary_key is None:
        return 0
    external_ids = []
    for doc_id in matching:
        document = read_by_id(ctx.env, ctx.codec, ctx.txn, index_id, doc_id)
        if document is not None:
            external_ids.append(extract_document_id(document, primary_key))
    return delete_documents(ctx, index_id, external_ids)
