"""A decoded token record laid out for matching: every field's words in one flat tuple.

Movie documents have a dozen fields; matching field by field pays Python's per-call overhead a dozen
times per document, while one flat tuple lets a single C-level probe find which query words the
document holds and ``tuple.index`` locate them. The view is what the read cache keeps between searches.

Most records are viewed once, by the search that read them, and matched for a handful of words: so the
view builds nothing per word beyond the flat tuple (a found word's field and position come from the
fields' boundaries), and words are not interned (interning a 100-word record cost more than decoding it).
Views hold tuples, not lists: the garbage collector stops tracking tuples of strings and ints, so a
warm cache of thousands of views does not make each full collection walk every cached word.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import accumulate, chain, compress
from typing import Any

from shard.index.records import FieldTokens, decode_record

_BYTES_PER_TOKEN = 110
"""Memory of one token in a view (its string, tuple slots, position int, its share of the places kept
for asked words): its cache weight. Measured with tracemalloc over the views one search caches: 104
bytes on the synthetic corpus, 109 on movies."""
_FEW_WORDS = 4


@dataclass(slots=True)
class RecordView:
    fields: tuple[FieldTokens, ...]
    words: tuple[str, ...]
    """Every field's words, field after field."""
    starts: tuple[int, ...]
    """The index in ``words`` of each field's first word."""
    _vocabulary: tuple[str, ...] | None = None
    _places: dict[str, tuple[tuple[int, int], ...]] | None = None
    """Field id and position of each word a search asked for, kept with the cached view."""

    @property
    def weight(self) -> int:
        return len(self.words) * _BYTES_PER_TOKEN + 64

    def locate(self, index: int) -> tuple[int, int]:
        """The field id and position of ``words[index]``."""
        number = bisect_right(self.starts, index) - 1
        entry = self.fields[number]
        return entry.field_id, entry.positions[index - self.starts[number]]

    def places(self, wanted: Iterable[str]) -> dict[str, tuple[tuple[int, int], ...]]:
        """Field id and position of each occurrence of every ``wanted`` word (and of words asked before).

        Words this view was not asked for before are found with a C-level scan (``tuple.index`` for a
        few words, one pass for many) and located; their places are kept as tuples, so a cached view
        searched again for the same words answers by lookups. Only asked words are kept: a map of
        every word would cost the first search more than it saves, and its lists would make the
        garbage collector walk every cached word on each full collection."""
        known = self._places
        if known is None:
            known = self._places = {}
        missing = {word: None for word in wanted if word not in known}
        if missing:
            located: dict[str, list[tuple[int, int]]] = {word: [] for word in missing}
            words, locate = self.words, self.locate
            for index in _scan(words, missing):
                located[words[index]].append(locate(index))
            for word, found in located.items():
                known[word] = tuple(found)
        return known

    def starting_with(self, prefix: str) -> tuple[str, ...]:
        """The document's distinct words starting with ``prefix``: two bisections of its sorted
        vocabulary (built on first use, kept with the cached view) instead of a test per word."""
        vocabulary = self._vocabulary
        if vocabulary is None:
            vocabulary = self._vocabulary = tuple(sorted(set(self.words)))
        start = bisect_left(vocabulary, prefix)
        return vocabulary[start : bisect_left(vocabulary, prefix + _LAST_CHARACTER, start)]


def _scan(words: tuple[str, ...], wanted: dict[str, Any]) -> list[int]:
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


EMPTY_VIEW = RecordView((), (), ())
_LAST_CHARACTER = chr(0x10FFFF)


def view_record(data: bytes) -> RecordView:
    fields = decode_record(data)
    words = tuple(chain.from_iterable(entry.words for entry in fields))
    starts = tuple(accumulate((len(entry.words) for entry in fields[:-1]), initial=0))
    return RecordView(tuple(fields), words, starts)
