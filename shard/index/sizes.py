"""What one index takes in each of the shard's tables (``internalDatabaseSizes``, core.md §3.2).

Every index shares the shard's tables, its keys prefixed by its internal id, so LMDB's page counts
cannot be split by index: an index's share of a table is the bytes of its keys and values, read by
one scan of its key range (page overhead and free pages left out). The stats route asks for it only
with ``showInternalDatabaseSizes``, as the scan grows with the index.
"""

from __future__ import annotations

import lmdb

from shard.index.env import Database, StoreEnv, index_prefix


def tables(env: StoreEnv) -> dict[str, Database]:
    """The tables that hold keys of an index, by the names the stats show (docs/architecture.md)."""
    return {
        "documents": env.documents,
        "externalIds": env.external_ids,
        "indexState": env.index_state,
        "sequences": env.sequences,
        "words": env.words,
        "prefixes": env.prefixes,
        "stems": env.stems,
        "impacts": env.impacts,
        "records": env.records,
        "settings": env.settings,
        "facets": env.facets,
        "shapes": env.shapes,
        "vectors": env.vectors,
        "vectorSpaces": env.vector_spaces,
        "vectorJournal": env.vector_journal,
    }


def index_table_sizes(env: StoreEnv, txn: lmdb.Transaction[memoryview], index_id: int) -> dict[str, int]:
    """Bytes of the index's keys and values per table; ``txn`` is opened with ``buffers=True`` so
    that values are measured without being copied."""
    prefix = index_prefix(index_id)
    width = len(prefix)
    sizes: dict[str, int] = {}
    for name, database in tables(env).items():
        total = 0
        with txn.cursor(database) as cursor:
            if cursor.set_range(prefix):
                for key, value in cursor:
                    if key[:width] != prefix:
                        break
                    total += len(key) + len(value)
        sizes[name] = total
    return sizes
