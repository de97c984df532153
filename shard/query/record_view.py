"""A decoded token record laid out for matching: every field's words in one flat list.

Movie documents have a dozen fields; matching field by field pays Python's per-call overhead a dozen
times per document, while one flat list lets a single C-level probe find which query words the
document holds and ``list.index`` locate them. The view is what the read cache keeps between searches.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from itertools import chain, repeat

from shard.index.records import FieldTokens, decode_record

_BYTES_PER_TOKEN = 48
"""Rough memory of one token in a view (list slots and position ints): its cache weight."""


@dataclass(frozen=True, slots=True)
class RecordView:
    fields: list[FieldTokens]
    words: list[str]
    """Every field's words, field after field."""
    field_ids: list[int]
    positions: list[int]
    """The field and position of each entry of ``words``."""

    @property
    def weight(self) -> int:
        return len(self.words) * _BYTES_PER_TOKEN + 64


EMPTY_VIEW = RecordView([], [], [], [])


def view_record(data: bytes) -> RecordView:
    """Words are interned so the cached views of an index share their vocabulary's strings."""
    fields = decode_record(data)
    words = list(map(sys.intern, chain.from_iterable(entry.words for entry in fields)))
    start = 0
    for entry in fields:
        end = start + len(entry.words)
        entry.words[:] = words[start:end]
        start = end
    field_ids = list(chain.from_iterable(repeat(entry.field_id, len(entry.words)) for entry in fields))
    positions = list(chain.from_iterable(entry.positions for entry in fields))
    return RecordView(fields, words, field_ids, positions)
