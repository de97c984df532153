"""Term frequencies and field lengths in classes, so that ``bm25`` bounds a score from postings alone.

The ``bm25`` strategy scores documents from their token records in decreasing order of an upper bound
of their score, and stops once no unscored bound beats the best score found. Postings say only which
documents hold a word, so that bound had to assume every term saturated (any number of occurrences in
the shortest field): on common words it stayed far above every real score and a search scored its whole
record budget. This table gives the two numbers BM25 needs, in classes of ``STEPS``:

- ``index id + "w" + word + 0x00 + field id (u16) + class (u8)``: the documents holding ``word`` that
  many times in the field, class ``c`` meaning at most ``STEPS[c]`` times; a document absent from every
  class holds it once (most do, so most words have no key at all);
- ``index id + 0x00 + field id (u16) + class (u8)``: the documents whose field has at least
  ``STEPS[c]`` words (and fewer than the next step), every field of every document.

Kept in step with the words table by the same batch deltas (``postings.py``), rebuilt with the other
searchable tables.
"""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence

from pyroaring import BitMap

from shard.index.env import Database, Txn, index_prefix
from shard.index.postings import decode_bitmap, scan

_FIELD = struct.Struct(">H")
_WORD_KIND = b"w"
_LENGTH_KIND = b"\x00"
_SEPARATOR = b"\x00"


def _steps(limit: int) -> tuple[int, ...]:
    """1 to 8, then four steps per doubling (8, 10, 12, 14, 16, 20, ...): a class's bound is within
    25 % of any value in it."""
    steps = list(range(1, 8))
    power = 8
    while power <= limit:
        steps.extend(power + quarter * power // 4 for quarter in range(4))
        power *= 2
    return tuple(steps)


STEPS = _steps(1 << 16)
"""Class boundaries (a field holds at most 2^16 positions, ``indexer.MAX_POSITION``)."""


def frequency_class(count: int) -> int:
    """The class of a word occurring ``count`` (>= 2) times: the first step at least ``count``."""
    return bisect_left(STEPS, count)


def length_class(words: int) -> int:
    """The class of a field of ``words`` (>= 1) words: the last step at most ``words``."""
    return bisect_right(STEPS, words) - 1


def field_keys(index_id: int, field_id: int, words: Sequence[str]) -> list[bytes]:
    """A field's keys: its length's and the repeated words' frequency classes."""
    prefix = index_prefix(index_id)
    field = _FIELD.pack(field_id)
    keys = [prefix + _LENGTH_KIND + field + bytes((length_class(len(words)),))]
    for word, count in Counter(words).items():
        if count > 1:
            keys.append(
                prefix + _WORD_KIND + word.encode() + _SEPARATOR + field + bytes((frequency_class(count),))
            )
    return keys


def word_frequencies(txn: Txn, db: Database, index_id: int, word: str) -> dict[int, list[tuple[int, BitMap]]]:
    """Per field id, (at most this many occurrences, documents) of the documents holding ``word``
    more than once there."""
    start = index_prefix(index_id) + _WORD_KIND + word.encode() + _SEPARATOR
    found: dict[int, list[tuple[int, BitMap]]] = {}
    for key, value in scan(txn, db, start):
        field_id: int = _FIELD.unpack(key[-3:-1])[0]
        found.setdefault(field_id, []).append((STEPS[key[-1]], decode_bitmap(value)))
    return found


def field_lengths(txn: Txn, db: Database, index_id: int, field_id: int) -> list[tuple[int, BitMap]]:
    """(at least this many words, documents) of the documents having the field."""
    start = index_prefix(index_id) + _LENGTH_KIND + _FIELD.pack(field_id)
    return [(STEPS[key[-1]], decode_bitmap(value)) for key, value in scan(txn, db, start)]
