"""Query parsing (search.md §7.1): the analyser's tokens turned into terms, phrases and negations.

Quotes and the negation dash are separators to the analyser, so they are read back from the
separator runs between words: the query is tokenised exactly like documents, and the operators only
decide how the resulting words group.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shard.analysis import Analyzer, Token, TokenKind

MAX_TERMS = 10
"""Only the first ten terms count; a phrase is one term, negations do not count."""
MAX_TOKENS = 1000


@dataclass(frozen=True)
class QueryTerm:
    """One unit the ranking rules count: a word, or a quoted phrase.

    ``words`` of a phrase keep ``None`` for its stop words: they match any one word.
    """

    index: int
    words: tuple[str | None, ...]
    phrase: bool
    prefix: bool
    """The query's last token with nothing after it: matched as a prefix while the user types."""
    position: int
    """Word offset of the term in the query, for the word-position rule."""

    @property
    def word(self) -> str:
        """The normalised word of a plain term."""
        return self.words[0] or ""

    @property
    def word_count(self) -> int:
        """Indexed words of the term: what the words rule counts (a phrase's stop words do not)."""
        return sum(word is not None for word in self.words)


@dataclass
class ParsedQuery:
    terms: list[QueryTerm] = field(default_factory=list)
    negated_words: list[str] = field(default_factory=list)
    negated_phrases: list[tuple[str | None, ...]] = field(default_factory=list)
    stop_words: list[str] = field(default_factory=list)
    """Stop words the query dropped: still highlighted in documents."""

    @property
    def placeholder(self) -> bool:
        return not self.terms


@dataclass
class _Group:
    """Words collected for one phrase (or a single word when not quoted)."""

    words: list[Token] = field(default_factory=list)
    negated: bool = False
    quoted: bool = False


def parse_query(
    analyzer: Analyzer, q: str | None, locales: tuple[str, ...] = (), max_terms: int | None = MAX_TERMS
) -> ParsedQuery:
    """``max_terms``: None keeps every term (the ``bm25`` strategy, a Sift extension)."""
    parsed = ParsedQuery()
    if not q or not q.strip():
        return parsed
    tokens = analyzer.tokens(q, locales)[:MAX_TOKENS]
    groups = _group(tokens)
    ends_with_word = bool(tokens) and tokens[-1].kind is TokenKind.WORD
    offset = 0
    for number, group in enumerate(groups):
        last = number == len(groups) - 1
        if group.negated:
            _add_negation(parsed, group)
            continue
        if max_terms is not None and len(parsed.terms) >= max_terms:
            continue
        if group.quoted:
            words = tuple(None if token.stop_word else token.normalized for token in group.words)
            if any(word is not None for word in words):
                parsed.terms.append(QueryTerm(len(parsed.terms), words, True, False, offset))
            offset += len(words)
            continue
        token = group.words[0]
        prefix = last and ends_with_word
        if token.stop_word and not prefix:
            parsed.stop_words.append(token.normalized)
            offset += 1
            continue
        parsed.terms.append(QueryTerm(len(parsed.terms), (token.normalized,), False, prefix, offset))
        offset += 1
    return parsed


def _add_negation(parsed: ParsedQuery, group: _Group) -> None:
    if group.quoted:
        words = tuple(None if token.stop_word else token.normalized for token in group.words)
        if any(word is not None for word in words):
            parsed.negated_phrases.append(words)
    elif not group.words[0].stop_word:
        parsed.negated_words.append(group.words[0].normalized)


def _group(tokens: list[Token]) -> list[_Group]:
    """Words grouped into phrases and single words, with their negation flag.

    A quote opens or closes a phrase; an unclosed quote runs to the end; a hard separator inside a
    phrase ends it and starts another. A dash negates the next word or phrase when it starts the query
    or follows whitespace.
    """
    groups: list[_Group] = []
    phrase: _Group | None = None
    negate_next = False
    previous_char = " "
    for token in tokens:
        if token.kind is TokenKind.WORD:
            if not token.normalized:
                continue
            if phrase is not None:
                phrase.words.append(token)
            else:
                groups.append(_Group([token], negated=negate_next))
            negate_next = False
            previous_char = token.text[-1]
            continue
        if phrase is not None and token.kind is TokenKind.HARD_SEPARATOR:
            phrase = _Group(negated=phrase.negated, quoted=True)
            groups.append(phrase)
        for char in token.text:
            if char == '"':
                if phrase is None:
                    phrase = _Group(negated=negate_next, quoted=True)
                    groups.append(phrase)
                else:
                    phrase = None
                negate_next = False
            elif char == "-" and phrase is None and previous_char.isspace():
                negate_next = True
            elif negate_next and char != "-":
                negate_next = False
            previous_char = char
    return [group for group in groups if group.words]
