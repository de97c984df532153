"""``sort`` on document reads (core.md §3.3): the search's sort rules, applied to the selected documents.

The documents a read selects (``ids``, ``filter`` or every live one) go through the bucket sort with the
read's criteria as the only rules, so values order as in a search (search.md §5) and each document
carries the merge key a search hit does: the gateway interleaves the shards' pages by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyroaring import BitMap

from shard.index.sequence import read_sequences
from shard.query.context import SearchContext
from shard.query.parse import ParsedQuery
from shard.query.ranking.bucket_sort import Ranker
from shard.query.ranking.score import sort_key
from shard.query.ranking.sort import query_sort

SortedEntry = tuple[int, list[Any], dict[str, Any]]
"""``(sequence, merge key, document)``."""


def sorted_documents(ctx: SearchContext, docs: BitMap, sort: Sequence[str], wanted: int) -> list[SortedEntry]:
    """The first ``wanted`` of ``docs`` in ``sort`` order (ties in insertion order), with their keys;
    an unsortable criterion is ``invalid_document_sort``."""
    criteria = query_sort(ctx, sort, documents=True)
    ranker = Ranker(
        ctx, ParsedQuery(), [], strategy="last", threshold=None, sort=criteria, ranking_rules=["sort"]
    )
    ranked = ranker.rank(docs, wanted).docs
    sequences = read_sequences(ctx.env, ctx.txn, ctx.index_id, [doc.doc_id for doc in ranked])
    entries: list[SortedEntry] = []
    for doc, sequence in zip(ranked, sequences, strict=True):
        document = ctx.document(doc.doc_id)
        if document is not None:
            entries.append((sequence, sort_key(doc.ranks), document))
    return entries
