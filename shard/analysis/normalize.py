"""The word normaliser: what makes ``Café``, ``CAFE`` and ``café`` the same indexed word.

Case folding plus compatibility decomposition, then removal of the diacritics that writers of Latin,
Greek, Cyrillic, Hebrew and Arabic commonly omit. Combining marks of other scripts (Devanagari vowel
signs, Thai vowels, Japanese voicing marks) carry meaning and are kept; NFC then recomposes them (and
Hangul syllables).
"""

from __future__ import annotations

import unicodedata

_DIACRITIC_RANGES = (
    (0x0300, 0x036F),  # combining diacritical marks
    (0x0483, 0x0489),  # Cyrillic titlo and friends
    (0x0591, 0x05BD),  # Hebrew cantillation and points
    (0x05BF, 0x05BF),
    (0x05C1, 0x05C2),
    (0x05C4, 0x05C5),
    (0x05C7, 0x05C7),
    (0x0610, 0x061A),  # Arabic marks
    (0x064B, 0x065F),  # Arabic harakat
    (0x0670, 0x0670),
    (0x06D6, 0x06DC),
    (0x06DF, 0x06E4),
    (0x06E7, 0x06E8),
    (0x06EA, 0x06ED),
    (0x1AB0, 0x1AFF),  # combining diacritical marks extended
    (0x1DC0, 0x1DFF),  # combining diacritical marks supplement
    (0x20D0, 0x20FF),  # combining marks for symbols
    (0xFE20, 0xFE2F),  # combining half marks
)
_INVISIBLE = (0x00AD, 0x0640, 0x200C, 0x200D)  # soft hyphen, tatweel, ZWNJ, ZWJ: spelling variants only
_LETTER_FOLDS = {"æ": "ae", "œ": "oe", "đ": "d", "ð": "d", "\u0131": "i"}  # U+0131: dotless i
"""Latin letters with no Unicode decomposition that the reference engine still folds. It keeps ``ø``,
``ł``, ``þ`` and ``ħ`` as letters of their own (``lodz`` does not find ``Łódź``, ``l`` as a prefix
does not match it), so they are kept here too: folding them made Sift match documents it does not."""

_FOLD_TABLE: dict[int, str | None] = {
    **{code: None for low, high in _DIACRITIC_RANGES for code in range(low, high + 1)},
    **dict.fromkeys(_INVISIBLE),
    **{ord(letter): folded for letter, folded in _LETTER_FOLDS.items()},
}


_SHARP_S = "ß"
_CAPITAL_SHARP_S = "\u1e9e"


def fold(word: str) -> str:
    """The normalised form of one token; idempotent, and the identity on folded text."""
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", _casefold(unicodedata.normalize("NFKD", word)))
    return unicodedata.normalize("NFC", decomposed.translate(_FOLD_TABLE))


def _casefold(text: str) -> str:
    """Case folding that keeps ``ß`` a letter of its own, as the reference engine does: ``Straße``
    is searched as ``straße``, not ``strasse`` (``Malliß`` finds ``Malling`` within one typo)."""
    if _SHARP_S not in text and _CAPITAL_SHARP_S not in text:
        return text.casefold()
    return _SHARP_S.join(part.casefold() for part in text.replace(_CAPITAL_SHARP_S, _SHARP_S).split(_SHARP_S))
