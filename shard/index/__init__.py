"""The shard's durable storage (LMDB): documents, id mapping, catalog, postings and idempotent batches."""

from shard.index.context import BatchAborted

__all__ = ["BatchAborted"]
