"""The token record of a document: each searchable field's words in order with their positions.

This is what ranking reads at query time, for the few documents the top buckets need, to compute
proximity, attribute rank, word position and exactness; it replaces the word-pair tables that dominate
the reference engine's index. It is also the exact list of postings keys a document contributed, so
removing or replacing a document never re-analyses its old text.

Positions are stored as deltas (mostly 1, 8 across a sentence), which zstd with the index's trained
dictionary shrinks to almost nothing (one LMDB value per record, see ``record_store.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

import orjson


@dataclass(slots=True)
class FieldTokens:
    """Not frozen: a frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``,
    which made building a movie record's dozen entries a fifth of decoding it."""

    field_id: int
    language: str | None
    """The stemming language of this field's words (ISO 639-3), or None when none applied."""
    words: Sequence[str]
    positions: Sequence[int]
    """Decoded records hold tuples: a search shard caches thousands of them, and tuples of strings and
    ints drop out of the garbage collector's tracking where lists would make every full collection walk
    each word."""


def encode_record(fields: list[FieldTokens]) -> bytes:
    packed = []
    for entry in fields:
        positions = entry.positions
        deltas = [b - a for a, b in zip([0, *positions], positions, strict=False)]
        packed.append([entry.field_id, entry.language, entry.words, deltas])
    return orjson.dumps(packed)


def decode_record(data: bytes) -> list[FieldTokens]:
    return [
        FieldTokens(field_id, language, tuple(words), tuple(accumulate(deltas)))
        for field_id, language, words, deltas in orjson.loads(data)
    ]
