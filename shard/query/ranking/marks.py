"""Attribute rank, word position and exactness of a one-term bucket from postings, without any record.

A short query (``a``, ``ca``, ``san``) matches thousands of documents, far more than the per-query
record budget, yet with one kept term these rules only ask in which field the term is and where it
stands there, which the postings tell and mark (``shard/index/postings.py``: START, the field's first
word; WHOLE, the field's only word). So for every candidate, as the per-document costs would say:

- attribute rank: a derivation fitting the typo bucket is in a field of that weight (the fields'
  own postings, no mark needed);
- word position 0 (the term's query position being 0): a derivation fitting the typo bucket is the
  first word of an allowed field: the union of the derivations' START documents; the rest of the
  bucket keeps the per-document costs (and their budget), unless only a short prefix places the term:
  the prefix's position levels then split it whatever its size;
- exactness: an allowed field is the term's own word alone (WHOLE), else starts with it (START), else
  the word is elsewhere (its postings), else the term matched only through prefixes, typos or stems.

Split words and multi-word synonyms need the records (their words must be adjacent), so a term that
has them in scope is left to the per-document costs, as is a long prefix standing for more words than
the derivation lists.
"""

from __future__ import annotations

from pyroaring import BitMap

from shard.index.env import Database
from shard.index.postings import START, WHOLE, prefix_docs, term_docs
from shard.index.prefixes import is_short, level_term
from shard.query.context import SearchContext
from shard.query.derivations import STEM_COST, Derivations
from shard.query.docsets import typo_fields
from shard.query.parse import ParsedQuery
from shard.query.ranking.coverage import Kept


class TermMarks:
    """The marked documents of one-term kept sets, read once per search."""

    def __init__(self, ctx: SearchContext, query: ParsedQuery, derivations: list[Derivations]) -> None:
        self.ctx = ctx
        self.query = query
        self._single = {d.first: d for d in derivations if d.first == d.last}
        self._postings: dict[tuple[str, str, int | None, frozenset[int] | None], BitMap] = {}
        self._matched: dict[tuple[int, int | None, frozenset[int] | None, int | None], BitMap | None] = {}

    def _term(self, kept: Kept) -> Derivations | None:
        """The derivation of the kept set's one plain term, or None when the marks do not apply."""
        if len(kept) != 1 or self.query.terms[kept[0]].phrase:
            return None
        return self._single.get(kept[0])

    def starting(self, kept: Kept, typos: int | None) -> BitMap | None:
        """Documents where a derivation of the kept term fitting ``typos`` stands at position 0 of an
        allowed field (word position cost 0); None when the marks cannot tell."""
        derivation = self._term(kept)
        if derivation is None or self.query.terms[kept[0]].position != 0:
            return None
        return self.matched(derivation, typos, None, START)

    def leveled(self, kept: Kept, typos: int | None) -> str | None:
        """The kept term's short prefix when it alone places every match fitting ``typos`` (its other
        fitting derivations are words it prefixes, without typos), so that the prefix's position
        levels (``shard/index/prefixes.py``) give each document's word position cost; else None."""
        derivation = self._term(kept)
        if derivation is None or self.query.terms[kept[0]].position != 0:
            return None

        def fits(cost: int) -> bool:
            return typos is None or cost <= typos

        prefix = derivation.prefix
        if prefix is None or not is_short(prefix) or not fits(derivation.prefix_cost):
            return None
        if any(fits(match.cost) for _, match in derivation.phrases):
            return None
        if derivation.stem is not None and fits(STEM_COST):
            return None
        for word, match in derivation.words.items():
            if fits(match.cost) and (match.typos or not word.startswith(prefix)):
                return None
        return prefix

    def at_level(self, prefix: str, level: int) -> BitMap:
        """Documents whose earliest word starting with ``prefix`` in an allowed field is at ``level``."""
        ctx = self.ctx
        return self._read(ctx.env.prefixes, "p", level_term(prefix, level), None, ctx.allowed_fields)

    def in_fields(self, kept: Kept, typos: int | None, fields: set[int]) -> BitMap | None:
        """Documents where a derivation of the kept term fitting ``typos`` is in one of ``fields``
        (and allowed); None when the postings cannot tell."""
        derivation = self._term(kept)
        return None if derivation is None else self.matched(derivation, typos, fields, None)

    def weight_levels(self) -> list[tuple[int, set[int]]]:
        """The indexed fields grouped by their attribute rank weight, most important first."""
        levels: dict[int, set[int]] = {}
        for field_id in range(len(self.ctx.state.field_names)):
            levels.setdefault(self.ctx.weight(field_id), set()).add(field_id)
        return sorted(levels.items())

    def matched(
        self, derivation: Derivations, typos: int | None, fields: set[int] | None, mark: int | None
    ) -> BitMap | None:
        """Documents matching a derivation fitting ``typos`` in the allowed ``fields`` (all when None),
        so marked when ``mark`` is given; None when only records can tell."""

        def fits(cost: int) -> bool:
            return typos is None or cost <= typos

        if any(fits(match.cost) for _, match in derivation.phrases):
            return None
        key = (derivation.first, typos, None if fields is None else frozenset(fields), mark)
        if key in self._matched:
            return self._matched[key]
        env = self.ctx.env
        allowed = _within(self.ctx.allowed_fields, fields)
        found: list[BitMap] = []
        prefix = derivation.prefix
        if prefix is not None and fits(derivation.prefix_cost):
            if is_short(prefix):
                found.append(self._read(env.prefixes, "p", prefix, mark, allowed))
            elif derivation.prefix_complete:
                found.append(self._read_prefix(prefix, mark, allowed))
            else:
                return None
        typo_only = _within(typo_fields(self.ctx), fields)
        for word, match in derivation.words.items():
            if fits(match.cost):
                found.append(self._read(env.words, "w", word, mark, typo_only if match.typos else allowed))
        if derivation.stem is not None and fits(STEM_COST):
            found.append(self._read(env.words, "w", derivation.stem, mark, allowed))
            found.append(self._read(env.stems, "s", derivation.stem, mark, allowed))
        docs = self._matched[key] = BitMap.union(BitMap(), *found)
        return docs

    def exactness(self, kept: Kept) -> tuple[BitMap, BitMap, BitMap] | None:
        """(a field is the word alone, a field starts with it, the word anywhere) for the kept term's
        own word; None when the marks do not apply."""
        if self._term(kept) is None:
            return None
        word = self.query.terms[kept[0]].word
        words, allowed = self.ctx.env.words, self.ctx.allowed_fields
        return (
            self._read(words, "w", word, WHOLE, allowed),
            self._read(words, "w", word, START, allowed),
            self.ctx.word_docs(word, allowed),
        )

    def _read_prefix(self, prefix: str, mark: int | None, fields: set[int] | None) -> BitMap:
        """Every word the (complete) prefix stands for, in one pass over its key range."""
        if fields is not None and not fields:
            return BitMap()
        key = ("*", prefix, mark, None if fields is None else frozenset(fields))
        docs = self._postings.get(key)
        if docs is None:
            ctx = self.ctx
            docs = self._postings[key] = prefix_docs(
                ctx.txn, ctx.env.words, ctx.index_id, prefix, fields, mark
            )
        return docs

    def _read(self, db: Database, table: str, term: str, mark: int | None, fields: set[int] | None) -> BitMap:
        if fields is not None and not fields:
            return BitMap()
        if mark is None and table == "w":
            return self.ctx.word_docs(term, fields)
        key = (table, term, mark, None if fields is None else frozenset(fields))
        docs = self._postings.get(key)
        if docs is None:
            docs = self._postings[key] = term_docs(self.ctx.txn, db, self.ctx.index_id, term, fields, mark)
        return docs


def _within(fields: set[int] | None, limit: set[int] | None) -> set[int] | None:
    """``fields`` (None: all) restricted to ``limit`` (None: no restriction)."""
    if limit is None:
        return fields
    return set(limit) if fields is None else fields & limit
