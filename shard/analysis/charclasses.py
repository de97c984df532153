"""The tokenizer's Unicode character classes, as stdlib ``re`` expressions.

``re`` runs the per-word scan about twice as fast as ``regex`` but knows no Unicode properties or
scripts, so the classes are computed once with ``regex`` and spelled out as explicit code point ranges.
``re`` turns the BMP part of a set into a bitmap but tests astral ranges one by one, after the bitmap,
for every character that misses it (each space!); so astral ranges sit behind a one-range guard.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import regex

SPACELESS_SCRIPTS = ("Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar")
"""Scripts written without spaces between words: their runs go to ICU's dictionary word breaker.

Hangul is not among them: Korean separates words with spaces (particles stay attached to their word).
Script extensions are used so that ``ー`` and ``々`` stay inside Japanese words.
"""

SHARED_SCRIPTS = ("Latin", "Greek", "Cyrillic")
"""A character these scripts share with a space-less one (``U+0303`` combining tilde and ``U+0331``
macron below, also Thai's) is a word character: ``H̱allamish`` stays one word, as on the reference
engine, instead of being cut where a space-less run would start."""

WORD_JOINERS = "\u00ad\u200c\u200d"
"""Format characters that live inside words (soft hyphen, ZWNJ, ZWJ); the normaliser then drops them."""

HARD_SEPARATORS = (
    "!?;¡¿‽。、！？；｡︒﹔﹖﹗"  # noqa: RUF001 - Latin and CJK sentence ends, the ideographic comma
    "؟؛۔׃։܀܁܂।॥።፧፨။។៕᠃᠉"  # noqa: RUF001 - Arabic, Hebrew, Armenian, Syriac, Indic, Ethiopic, Myanmar, ...
)
"""Sentence punctuation, as the reference engine classifies it: line breaks, ``…``, ``‼`` and the
fullwidth full stop are soft there. ``.`` and ``,`` are hard only when a space follows them
(``SPACED_HARD``): ``node.js``, ``a,b`` and ``end.\n`` stay soft."""

DOT = "."
COMMA = ","
SPACED_HARD = (DOT, COMMA)
"""Hard when followed by a space (U+0020): the reference engine's ``". "`` and ``", "`` separators."""
_ASTRAL_GUARD = "(?=[\\U00010000-\\U0010ffff])"


class CharClass(NamedTuple):
    bmp: str
    """Body of a ``re`` set: the members below U+10000."""
    astral: str
    """Body of a ``re`` set: the members from U+10000."""

    def char(self, extra: str = "") -> str:
        """An expression matching one member (or one of ``extra``, a set body of BMP characters)."""
        return f"(?:[{self.bmp}{extra}]|{_ASTRAL_GUARD}[{self.astral}])"

    def run(self, extra: str = "") -> str:
        """An expression matching a maximal run of members, shaped so ``re`` loops on the bitmap."""
        bmp = f"[{self.bmp}{extra}]"
        astral = f"{_ASTRAL_GUARD}[{self.astral}]"
        return f"(?:{bmp}|{astral}){bmp}*(?:{astral}{bmp}*)*"


class CharClasses(NamedTuple):
    word: CharClass
    """Letters, digits and marks outside space-less scripts, plus the word joiners."""
    spaceless: CharClass
    """Letters, digits and marks of space-less scripts."""


_SURROGATES = 0x800
_SPLITS = (0xD800, 0x10000 - _SURROGATES)
"""String indices in ``_code_points()`` where a run must be cut: the surrogate gap, the BMP's end."""


def _code_points() -> str:
    """Every Unicode scalar value, in order (surrogates excluded)."""
    codes = np.concatenate([np.arange(0xD800, dtype="<u4"), np.arange(0xE000, 0x110000, dtype="<u4")])
    return codes.tobytes().decode("utf-32-le")


def _char_class(pattern: str, everything: str, extra: str = "") -> CharClass:
    bodies = [escape_class(extra), ""]  # [BMP, astral]; ``extra`` holds BMP characters only
    for match in regex.finditer(pattern, everything):
        start, end = match.span()
        for cut in _SPLITS:
            if start < cut < end:
                _add_range(bodies, everything, start, cut)
                start = cut
        _add_range(bodies, everything, start, end)
    return CharClass(bmp=bodies[0], astral=bodies[1])


def _add_range(bodies: list[str], everything: str, start: int, end: int) -> None:
    first, last = ord(everything[start]), ord(everything[end - 1])
    bodies[first >= 0x10000] += f"\\U{first:08x}" if first == last else f"\\U{first:08x}-\\U{last:08x}"


@functools.cache
def char_classes() -> CharClasses:
    """Computed on first use (~0.1 s), then shared by every analyser of the process."""
    everything = _code_points()
    scripts = "".join(f"\\p{{scx={script}}}" for script in SPACELESS_SCRIPTS)
    shared = "".join(f"\\p{{scx={script}}}" for script in SHARED_SCRIPTS)
    letters = r"[\p{L}\p{N}\p{M}]"
    spaceless = f"[[{scripts}]--[{shared}]]"
    return CharClasses(
        word=_char_class(rf"(?V1)[{letters}--{spaceless}]+", everything, extra=WORD_JOINERS),
        spaceless=_char_class(rf"(?V1)[{letters}&&{spaceless}]+", everything),
    )


def escape_class(chars: str) -> str:
    """``chars`` escaped for use inside a ``re`` character set."""
    return "".join(f"\\U{ord(char):08x}" for char in chars)
