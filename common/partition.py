"""Which shard owns a document: a stable hash of its primary key (crc32 is stable across processes)."""

from __future__ import annotations

import zlib


def shard_of(external_id: str, shard_count: int) -> int:
    return zlib.crc32(external_id.encode()) % shard_count
