"""Where the query's derivations occur inside one document, read from its token record.

The per-document ranking rules (proximity, attribute rank, word position, exactness) and phrase
checks need positions; the record holds each searchable field's words and positions, so one decoded
record answers all of them. Matching words are found with set intersections (C speed) and located
with ``tuple.index`` (``RecordView.places``), so a long field costs little more than its number of
matches; phrases are checked on the places of their words.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyroaring import BitMap

from shard.query.context import SearchContext
from shard.query.derivations import STEM_COST, Derivations, WordMatch
from shard.query.record_view import RecordView

_WORDS_PER_DOCUMENT = 10
"""Probing a record for the query's words costs about as much as ten bitmap intersections."""


Matched = dict[str, list[tuple[int, WordMatch]]]
"""The query words a document has, each with its (derivation number, match) entries."""
Places = dict[str, tuple[tuple[int, int], ...]]
"""Field id and position of each occurrence of a word (``RecordView.places``)."""


@dataclass(slots=True)
class Occurrence:
    """Not frozen: a frozen dataclass costs five times as much to build, and documents with a common
    prefix in every field build thousands."""

    derivation: int
    """Index of the derivation (in the query's derivation list) that matched."""
    field_id: int
    start: int
    end: int
    """Positions of the first and last matched word (equal for one word)."""
    match: WordMatch


def phrase_starts(record: RecordView, words: tuple[str | None, ...]) -> list[tuple[int, int]]:
    """Field id and start position of each place where ``words`` occur consecutively in one field
    (None = any one word: stop words are not stored but keep their position). The places of the
    first word are the candidates; each other word must have a place at its offset from them."""
    present = [(offset, word) for offset, word in enumerate(words) if word is not None]
    places = record.places(word for _, word in present)
    (first_offset, first), others = present[0], present[1:]
    required = [(offset - first_offset, set(places[word])) for offset, word in others]
    return [
        (field_id, position - first_offset)
        for field_id, position in places[first]
        if all((field_id, position + gap) in spots for gap, spots in required)
    ]


class DocMatcher:
    """Finds every derivation's occurrences in a record; built once per query."""

    def __init__(
        self,
        derivations: list[Derivations],
        allowed_fields: set[int] | None,
        exact_fields: set[int],
        nearest_to: int | None = None,
    ) -> None:
        self.allowed_fields = allowed_fields
        self.exact_fields = exact_fields
        self.nearest_to = nearest_to
        """For a one-term query (no word pairs, so no proximity): the term's query position. Only the
        occurrence nearest to it per derivation, field and match is kept, which is all attribute rank,
        word position and exactness look at; a short prefix otherwise yields dozens per document."""
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
        # Words matched the same ways share one list, so one-term queries group them (``_first_places``).
        shared: dict[tuple[tuple[int, int], ...], list[tuple[int, WordMatch]]] = {}
        for word, entries in self.words.items():
            self.words[word] = shared.setdefault(tuple((n, id(m)) for n, m in entries), entries)
        self._keys = frozenset(self.words).union(
            word for _, words, _ in self.phrases for word in words if word is not None
        )

    def occurrences(self, record: RecordView, holds: set[str] | None = None) -> list[Occurrence]:
        """``holds``: the query's words the document has, when already known from their postings."""
        allowed, exact_fields, listed = self.allowed_fields, self.exact_fields, self.words
        present = self._keys.intersection(record.words) if holds is None else holds
        matched = {word: listed[word] for word in present if word in listed}
        if self.prefixes:
            self._match_prefixes(record, matched)
        places = record.places(matched)
        if self.nearest_to == 0:
            found = self._first_places(matched, places)
        else:
            found = self._word_places(matched, places)
        for number, phrase, match in self.phrases:
            if any(word is not None and word not in present for word in phrase):
                continue
            span = len(phrase) - 1
            for field_id, start in phrase_starts(record, phrase):
                if (allowed is None or field_id in allowed) and not (
                    field_id in exact_fields and match.typos
                ):
                    found.append(Occurrence(number, field_id, start, start + span, match))
        return found

    def _word_places(self, matched: Matched, places: Places) -> list[Occurrence]:
        """Every place of the matched words; for a one-term query, only the nearest to the term per
        derivation, field and match."""
        allowed, exact_fields, nearest_to = self.allowed_fields, self.exact_fields, self.nearest_to
        if allowed is None and not exact_fields and nearest_to is None:
            # Every place of every matched word (the usual case): one comprehension, no tests.
            return [
                Occurrence(number, field_id, position, position, match)
                for word, entries in matched.items()
                for field_id, position in places[word]
                for number, match in entries
            ]
        found: list[Occurrence] = []
        nearest: dict[tuple[int, int, int], Occurrence] = {}
        for word, entries in matched.items():
            for field_id, position in places[word]:
                if allowed is not None and field_id not in allowed:
                    continue
                exact_only = field_id in exact_fields
                for number, match in entries:
                    if exact_only and match.typos:
                        continue
                    if nearest_to is None:
                        found.append(Occurrence(number, field_id, position, position, match))
                        continue
                    key = (number, field_id, id(match))
                    kept = nearest.get(key)
                    if kept is None or abs(position - nearest_to) < abs(kept.start - nearest_to):
                        nearest[key] = Occurrence(number, field_id, position, position, match)
        found.extend(nearest.values())
        return found

    def _first_places(self, matched: Matched, places: Places) -> list[Occurrence]:
        """A one-term query at position 0: the first place per field of each group of words matched
        the same ways (a short prefix matches dozens of words per document), found by a C-level
        sort instead of a comparison per place. The same as keeping the nearest occurrence per
        derivation, field and match; a match shared by two groups may yield two, which no rule
        tells apart from the nearer one."""
        groups: dict[int, tuple[list[tuple[int, WordMatch]], list[tuple[int, int]]]] = {}
        for word, entries in matched.items():
            group = groups.get(id(entries))
            if group is None:
                group = groups[id(entries)] = (entries, [])
            group[1].extend(places[word])
        found: list[Occurrence] = []
        allowed, exact_fields = self.allowed_fields, self.exact_fields
        for entries, spots in groups.values():
            # Sorted descending, so the smallest position of each field is the one the dict keeps.
            for field_id, position in dict(sorted(spots, reverse=True)).items():
                if allowed is not None and field_id not in allowed:
                    continue
                exact_only = field_id in exact_fields
                for number, match in entries:
                    if not (exact_only and match.typos):
                        found.append(Occurrence(number, field_id, position, position, match))
        return found

    def holdings(self, ctx: SearchContext, docs: BitMap) -> dict[int, set[str]] | None:
        """The query's words (listed or in phrases) each of ``docs`` has, from the words' postings;
        None when probing each document's record would be cheaper (many words, few documents)."""
        if len(self._keys) > _WORDS_PER_DOCUMENT * len(docs):
            return None
        holdings: dict[int, set[str]] = {doc_id: set() for doc_id in docs}
        for word in self._keys:
            for doc_id in ctx.word_docs(word, self.allowed_fields) & docs:
                holdings[doc_id].add(word)
        return holdings

    def _match_prefixes(self, record: RecordView, matched: Matched) -> None:
        """Prefixes too broad to list (one or two letters on a large index) are looked up in the
        document's own vocabulary."""
        for prefix, number, match in self.prefixes:
            alone = [(number, match)]  # one list for the prefix's words, see ``_first_places``
            for word in record.starting_with(prefix):
                known = matched.get(word)
                if known is None:
                    matched[word] = alone
                elif all(entry[0] != number for entry in known):
                    matched[word] = [*known, (number, match)]
