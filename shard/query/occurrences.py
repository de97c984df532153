"""Where the query's derivations occur inside one document, read from its token record.

The per-document ranking rules (proximity, attribute rank, word position, exactness) and phrase
checks need positions; the record holds each searchable field's words and positions, so one decoded
record answers all of them. Matching words are found with set intersections (C speed) and located
with ``list.index``, so a long field costs little more than its number of matches.
"""

from __future__ import annotations

from dataclasses import dataclass

from shard.analysis import Analyzer
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
        self,
        derivations: list[Derivations],
        analyzer: Analyzer,
        allowed_fields: set[int] | None,
        exact_fields: set[int],
    ) -> None:
        self.analyzer = analyzer
        self.allowed_fields = allowed_fields
        self.exact_fields = exact_fields
        self.words: dict[str, list[tuple[int, WordMatch]]] = {}
        self.prefixes: list[tuple[str, int, WordMatch]] = []
        """Prefixes standing for too many words to list: tested against each document word."""
        self.stems: list[tuple[str, int]] = []
        self.phrases: list[tuple[int, tuple[str | None, ...], WordMatch]] = []
        for number, derivation in enumerate(derivations):
            for word, match in derivation.words.items():
                self.words.setdefault(word, []).append((number, match))
            prefix_match = WordMatch(derivation.prefix_cost, 0, False)
            stem_match = WordMatch(STEM_COST, 0, False)
            if derivation.expansions is not None:
                for word in derivation.expansions:
                    if word in derivation.words:
                        continue
                    prefixed = derivation.prefix is not None and word.startswith(derivation.prefix)
                    self.words.setdefault(word, []).append((number, prefix_match if prefixed else stem_match))
            else:
                if derivation.prefix is not None:
                    self.prefixes.append((derivation.prefix, number, prefix_match))
                if derivation.stem is not None:
                    self.stems.append((derivation.stem, number))
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
            if self.prefixes or self.stems:
                self._match_slowly(entry, distinct, matched)
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

    def _match_slowly(
        self, entry: FieldTokens, distinct: set[str], matched: dict[str, list[tuple[int, WordMatch]]]
    ) -> None:
        """Prefixes of one or two letters: every document word is tested (stems with the field's
        language, as the stems table was built)."""
        stem = self.analyzer.stem
        language = entry.language
        for word in distinct:
            extra = [(number, match) for prefix, number, match in self.prefixes if word.startswith(prefix)]
            if language is not None:
                extra += [
                    (number, WordMatch(STEM_COST, 0, False))
                    for target, number in self.stems
                    if word[:2] == target[:2] and stem(word, language) == target
                ]
            if extra:
                known = {number for number, _ in matched.get(word, ())}
                matched[word] = [*matched.get(word, ()), *(entry for entry in extra if entry[0] not in known)]
