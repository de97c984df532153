"""The general tokenizer: word spans, separator runs and positions of any text, for any config.

Runs of space-less scripts (Chinese, Japanese, Thai, Lao, Khmer, Myanmar) are cut into words by ICU's
dictionary-based word breaker; everything else is decided by ``Patterns.general``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

from icu4py.breakers import WordBreaker

from shard.analysis.patterns import CUSTOM, SEPARATOR, SPACELESS, Patterns
from shard.analysis.tokens import HARD_GAP, MAX_POSITION, SOFT_GAP, TokenKind

Span = tuple[TokenKind, int, int, int]
"""(kind, start, end, position): offsets in characters; consecutive separators form one run, whose
position is that of the word before it (0 if none). Nothing past ``MAX_POSITION`` is produced."""

_WORD, _SOFT, _HARD = TokenKind.WORD, TokenKind.SOFT_SEPARATOR, TokenKind.HARD_SEPARATOR

_PRIMERS = ("東京", "ภาษาไทย", "ພາສາລາວ", "ភាសាខ្មែរ", "မြန်မာစာ")
"""One run per dictionary break engine (Chinese/Japanese, Thai, Lao, Khmer, Burmese)."""


@functools.cache
def prime_word_breaker() -> None:
    """Load ICU's dictionary break engines once per process, before any text is segmented.

    ICU creates them lazily, process-wide, choosing one by the script of a run's first character. ``ー``
    (U+30FC, and halfwidth U+FF70) has script Common, so while no Chinese/Japanese engine exists a run
    starting with it gets no dictionary breaks (``ー𠀋`` -> one word); once one does, that engine claims
    ``ー`` too (``ー``, ``𠀋``). Without priming, the words of a text would depend on what the process
    segmented before: ``index_text`` and ``tokens``, or indexing and searching, could disagree. ~10 ms.
    """
    for primer in _PRIMERS:
        for _ in WordBreaker(primer, "und"):
            pass


def segment(patterns: Patterns, text: str, icu_locale: str) -> Iterator[Span]:
    position = -1
    gap = SOFT_GAP
    run_start = -1  # the pending separator run: custom separators and default ones may alternate
    run_end = -1
    for match in patterns.general.finditer(text):
        group = match.lastgroup
        start, end = match.span()
        if group == SEPARATOR or (group == CUSTOM and match.group().casefold() in patterns.custom_separators):
            if run_start < 0:
                run_start = start
            run_end = end
            continue
        if run_start >= 0:
            hard = patterns.is_hard_run(text[run_start:run_end]) is not None
            yield (_HARD if hard else _SOFT), run_start, run_end, max(position, 0)
            gap = HARD_GAP if hard else SOFT_GAP
            run_start = -1
        if group == SPACELESS:
            pieces = []
            for piece in WordBreaker(match.group(), icu_locale):
                pieces.append((start, start + len(piece)))
                start += len(piece)
        else:
            pieces = [(start, end)]
        for start, end in pieces:
            position = 0 if position < 0 else position + gap
            if position > MAX_POSITION:
                return
            gap = SOFT_GAP
            yield _WORD, start, end, position
    if run_start >= 0:
        hard = patterns.is_hard_final_run(text[run_start:]) is not None
        yield (_HARD if hard else _SOFT), run_start, run_end, max(position, 0)
