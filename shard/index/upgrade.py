"""The shard's part of an ``upgradeDatabase`` task: bring a store of an older format to the current one.

Formats 3 to 7 hold the same documents as format 8 but older searchable tables: format 7 stemmed text
too short to detect a language in in the shard's most common language so far and has no impacts
table (term frequency and field length classes, ``impacts.py``), format 6's prefixes
table lacks three-character prefixes and position levels (``prefixes.py``), format 5's index state
does not count each field's words (``IndexState.field_tokens``) and holds words of ``_geo``,
``_geojson`` and ``_vectors``, format 4's postings values carry no
START/WHOLE marks (``postings.py``), format 3's words were analysed before ``ø ł þ ħ`` and Thai marks
were kept. Rebuilding every index's postings and token records from its stored documents, as a
settings change of the searchable attributes does, gives exactly what format 8 stores.
It runs in the batch's one write transaction with the new format recorded last, so a crash leaves the
older store whole and the re-sent batch upgrades it again; a re-sent batch that committed answers from
its record.
"""

from __future__ import annotations

from shard.index.catalog import uids_by_id
from shard.index.context import WriteContext
from shard.index.documents import reindex_documents
from shard.index.env import FORMAT_VERSION


def upgrade_store(ctx: WriteContext) -> int:
    """Rebuild what the older format stored differently; return the format found."""
    found = ctx.env.stored_format(ctx.txn)
    if found < FORMAT_VERSION:
        for index_id in sorted(uids_by_id(ctx.env, ctx.txn)):
            ctx.check_abort()
            reindex_documents(ctx, index_id, searchable=True, facets=None)
        ctx.env.record_format(ctx.txn)
    return found
