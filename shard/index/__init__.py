"""The shard's durable document store (LMDB): documents, id mapping, catalog and idempotent batches."""

from shard.index.context import BatchAborted
from shard.index.store import ShardStore

__all__ = ["BatchAborted", "ShardStore"]
