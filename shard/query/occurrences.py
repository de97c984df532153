"""Where the query's derivations occur inside one document, read from its token record.

The per-document ranking rules (proximity, attribute rank, word position, exactness) and phrase
checks need positions; the record holds each searchable field's words and positions, so one decoded
record answers all of them. Matching words are found with set intersections (C speed) and located
with ``list.index``, so a long field costs little more than its number of matches.
"""

from __future__ import annotations

from dataclasses import dataclass

from shard.index.records import FieldTokens
from shard.query.derivations import STEM_COST, Derivations, WordMatch


@dataclass(frozen=True, slots=True)
class Occurrence:
    derivation: int
    """Index of the derivation (in the query's derivation list) that matched."""
    field_id: int
    start: int
    end: int
    """Positions of the first and last matched word (equal for one word)."""
    match: WordMatch


def phrase_positions(entry: FieldTokens, words: tuple[str | None, ...]) -> list[int]:
    """Start positions where ``words`` occur consecutively in the field (None = any one word)."""
    anchor = next(offset for offset, word in enumerate(words) if word is not None)
    at = dict(zip(entry.positions, entry.words, strict=True))
    starts = []
    for position in _positions_of(entry, words[anchor]):  # type: ignore[arg-type]
        start = position - anchor
        if all(word is None or at.get(start + offset) == word for offset, word in enumerate(words)):
            starts.append(start)
    return starts


def _positions_of(entry: FieldTokens, word: str) -> list[int]:
    found: list[int] = []
    words = entry.words
    index = -1
    while True:
        try:
            index = words.index(word, index + 1)
        except ValueError:
            return found
        found.append(entry.positions[index])


class DocMatcher:
    """Finds every derivation's occurrences in a record; built once per query."""

    def __init__(
        self, derivations: list[Derivations], allowed_fields: set[int] | None, exact_fields: set[int]
    ) -> None:
        self.allowed_fields = allowed_fields
        self.exact_fields = exact_fields
        self.words: dict[str, list[tuple[int, WordMatch]]] = {}
        self.prefixes: list[tuple[str, int, WordMatch]] = []
        """Prefixes standing for more words than listed: tested against each document word."""
        self.phrases: list[tuple[int, tuple[str | None, ...], WordMatch]] = []
        for number, derivation in enumerate(derivations):
            listed: dict[str, WordMatch] = dict.fromkeys(
                derivation.stem_words, WordMatch(STEM_COST, 0, False)
            )
            prefix_match = WordMatch(derivation.prefix_cost, 0, False)
            if derivation.prefix is not None:
                if derivation.prefix_complete:
                    listed.update(dict.fromkeys(derivation.prefix_words, prefix_match))
                else:
                    self.prefixes.append((derivation.prefix, number, prefix_match))
            listed.update(derivation.words)
            for word, match in listed.items():
                self.words.setdefault(word, []).append((number, match))
            for words, match in derivation.phrases:
                self.phrases.append((number, words, match))
        self._keys = self.words.keys()

    def occurrences(self, record: list[FieldTokens]) -> list[Occurrence]:
        found: list[Occurrence] = []
        allowed, exact_fields = self.allowed_fields, self.exact_fields
        for entry in record:
            field_id = entry.field_id
            if allowed is not None and field_id not in allowed:
                continue
            exact_only = field_id in exact_fields
            distinct = set(entry.words)
            matched: dict[str, list[tuple[int, WordMatch]]] = {
                word: self.words[word] for word in distinct & self._keys
            }
            if self.prefixes:
                self._match_prefixes(distinct, matched)
            for word, matches in matched.items():
                positions = _positions_of(entry, word)
                for number, match in matches:
                    if exact_only and match.typos:
                        continue
                    found.extend(
                        Occurrence(number, field_id, position, position, match) for position in positions
                    )
            for number, words, match in self.phrases:
                if exact_only and match.typos:
                    continue
                if any(word is not None and word not in distinct for word in words):
                    continue
                span = len(words) - 1
                found.extend(
                    Occurrence(number, field_id, start, start + span, match)
                    for start in phrase_positions(entry, words)
                )
        return found

    def _match_prefixes(self, distinct: set[str], matched: dict[str, list[tuple[int, WordMatch]]]) -> None:
        """Prefixes too broad to list (one or two letters on a large index): every word is tested."""
        for word in distinct:
            extra = [(number, match) for prefix, number, match in self.prefixes if word.startswith(prefix)]
            if extra:
                known = {number for number, _ in matched.get(word, ())}
                matched[word] = [*matched.get(word, ()), *(entry for entry in extra if entry[0] not in known)]
