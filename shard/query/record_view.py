"""A decoded token record laid out for matching: every field's words in one flat list.

Movie documents have a dozen fields; matching field by field pays Python's per-call overhead a dozen
times per document, while one flat list lets a single C-level probe find which query words the
document holds and ``list.index`` locate them. The view is what the read cache keeps between searches.

Most records are viewed once, by the search that read them, and matched for a handful of words: so the
view builds nothing per word beyond the flat list (a found word's field and position come from the
fields' boundaries), and words are not interned (interning a 100-word record cost more than decoding it).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import accumulate, chain, compress
from typing import Any

from shard.index.records import FieldTokens, decode_record

_BYTES_PER_TOKEN = 160
"""Rough memory of one token in a view (its string, list slots, position int, its share of the word
index built on reuse): its cache weight."""
_FEW_WORDS = 4


@dataclass(slots=True)
class RecordView:
    fields: list[FieldTokens]
    words: list[str]
    """Every field's words, field after field."""
    starts: list[int]
    """The index in ``words`` of each field's first word."""
    _vocabulary: list[str] | None = None
    _where: dict[str, list[tuple[int, int]]] | None = None
    _searches: int = 0

    @property
    def weight(self) -> int:
        return len(self.words) * _BYTES_PER_TOKEN + 64

    def locate(self, index: int) -> tuple[int, int]:
        """The field id and position of ``words[index]``."""
        number = bisect_right(self.starts, index) - 1
        entry = self.fields[number]
        return entry.field_id, entry.positions[index - self.starts[number]]

    def find(self, wanted: dict[str, Any]) -> list[tuple[str, int, int]]:
        """(word, field id, position) of each occurrence of the ``wanted`` words. A view's first search
        scans (``list.index`` for a few words, one C-level pass for many) and locates what it found; a
        view searched again, which only cached views are, maps every word to its occurrences once and
        answers every later search by lookups."""
        where = self._where
        if where is None:
            self._searches += 1
            if self._searches == 1:
                words, locate = self.words, self.locate
                return [(words[index], *locate(index)) for index in _scan(words, wanted)]
            where = {}
            for entry in self.fields:
                field_id = entry.field_id
                for word, position in zip(entry.words, entry.positions, strict=True):
                    found = where.get(word)
                    if found is None:
                        where[word] = [(field_id, position)]
                    else:
                        found.append((field_id, position))
            self._where = where
        return [(word, field_id, position) for word in wanted for field_id, position in where.get(word, ())]

    def starting_with(self, prefix: str) -> list[str]:
        """The document's distinct words starting with ``prefix``: two bisections of its sorted
        vocabulary (built on first use, kept with the cached view) instead of a test per word."""
        vocabulary = self._vocabulary
        if vocabulary is None:
            vocabulary = self._vocabulary = sorted(set(self.words))
        start = bisect_left(vocabulary, prefix)
        return vocabulary[start : bisect_left(vocabulary, prefix + _LAST_CHARACTER, start)]


def _scan(words: list[str], wanted: dict[str, Any]) -> list[int]:
    if len(wanted) > _FEW_WORDS:
        return list(compress(range(len(words)), map(wanted.__contains__, words)))
    found: list[int] = []
    for word in wanted:
        index = -1
        while True:
            try:
                index = words.index(word, index + 1)
            except ValueError:
                break
            found.append(index)
    return found


EMPTY_VIEW = RecordView([], [], [])
_LAST_CHARACTER = chr(0x10FFFF)


def view_record(data: bytes) -> RecordView:
    fields = decode_record(data)
    words = list(chain.from_iterable(entry.words for entry in fields))
    starts = list(accumulate((len(entry.words) for entry in fields[:-1]), initial=0))
    return RecordView(fields, words, starts)
