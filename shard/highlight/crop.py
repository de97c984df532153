"""The crop window of a text (search.md §7.8): the best group of matches, grown word by word to N words."""

from __future__ import annotations

from shard.analysis import Token, TokenKind
from shard.highlight.matching import AnalysedText, Match

GAP_CAP = 7
"""Beyond this many words apart, two matches are simply "far": a larger gap scores no worse."""

_WORD, _HARD = TokenKind.WORD, TokenKind.HARD_SEPARATOR


def crop_window(analysed: AnalysedText, length: int, text_length: int) -> tuple[int, int]:
    """Character bounds of the ``length``-word window (``length`` > 0); the whole text if fewer words."""
    tokens, words, matches = analysed.tokens, analysed.words, analysed.matches
    if not matches:
        return _grow(tokens, -1, 0, length, text_length)
    first, last = _best_interval(matches, length)
    first_word = matches[first].first_word
    last_word = max(match.last_word for match in matches[first : last + 1])
    span = last_word - first_word + 1
    if span > length:  # only a phrase longer than the window: its first words
        return tokens[words[first_word]].start, tokens[words[first_word + length - 1]].end
    return _grow(tokens, words[first_word] - 1, words[last_word] + 1, length - span, text_length)


def _best_interval(matches: list[Match], length: int) -> tuple[int, int]:
    """Indices of the first and last match of the best run of consecutive matches fitting in ``length`` words.

    Only runs that cannot take in the next match are candidates (a sliding window, linear in the
    matches). Score: distinct terms, then smallest total gap (each capped at ``GAP_CAP``), then most
    successive pairs in query order; the earliest run wins ties. With no candidate (every match is
    a phrase longer than the window), the first match.
    """
    firsts = [match.first_word for match in matches]
    lasts = [match.last_word for match in matches]
    terms = [match.term for match in matches]
    gaps = [0]
    in_order = [0]
    for at in range(1, len(matches)):
        gaps.append(gaps[-1] + min(GAP_CAP, max(0, firsts[at] - lasts[at - 1])))
        in_order.append(in_order[-1] + (terms[at] > terms[at - 1]))
    best = (0, 0)
    best_score = (0, 0, 0)  # any candidate beats it: it has at least one term
    seen: dict[int, int] = {}  # term -> matches of it in the run
    left = 0
    last_index = len(matches) - 1
    for right, last in enumerate(lasts):
        seen[terms[right]] = seen.get(terms[right], 0) + 1
        while left < right and last - firsts[left] >= length:
            term = terms[left]
            seen[term] -= 1
            if not seen[term]:
                del seen[term]
            left += 1
        start = firsts[left]
        if last - start >= length or (right < last_index and lasts[right + 1] - start < length):
            continue  # longer than the window, or the run can still take in the next match
        score = (len(seen), gaps[left] - gaps[right], in_order[right] - in_order[left])
        if score > best_score:
            best, best_score = (left, right), score
    return best


def _grow(tokens: list[Token], before: int, after: int, remaining: int, text_length: int) -> tuple[int, int]:
    """Widen the window ``tokens[before + 1 : after]`` until it holds ``remaining`` more words.

    Alternates sides, left first; towards a word rather than a separator, and away from a hard
    separator; once one end of the text is reached, only the other side grows. The window never
    ends on a separator taken in while words remain to be added, so crop markers touch words.
    """
    count = len(tokens)
    while remaining > 0:
        before_kind = tokens[before].kind if before >= 0 else None
        after_kind = tokens[after].kind if after < count else None
        if before_kind is None:
            if after_kind is None:
                break
            after += 1
            remaining -= after_kind is _WORD
        elif after_kind is None:
            before -= 1
            remaining -= before_kind is _WORD
        elif before_kind is _WORD:
            before -= 1
            remaining -= 1
            if after_kind is _WORD and remaining:
                after += 1
                remaining -= 1
        elif after_kind is _WORD:
            after += 1
            remaining -= 1
        elif before_kind is after_kind:
            before -= 1
            if remaining > 1:
                after += 1
        elif before_kind is _HARD:
            after += 1
        else:
            before -= 1
    start = tokens[before].end if before >= 0 else 0
    end = tokens[after].start if after < count else text_length
    return start, end
