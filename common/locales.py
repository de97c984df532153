"""Locale codes of ``localizedAttributes`` and search ``locales`` (search.md §6.10): ISO 639-1 and ISO
639-3 codes, plus ``cmn``, and the ISO 639-3 code each one names.

Shared by the settings' validation, the shards' analysers and the field listing, which shows locales.
"""

from __future__ import annotations

from typing import Final

_PAIRS: Final = {
    "af": "afr", "ak": "aka", "am": "amh", "ar": "ara", "az": "aze", "be": "bel", "bn": "ben", "bg": "bul",
    "ca": "cat", "cs": "ces", "da": "dan", "de": "deu", "el": "ell", "en": "eng", "eo": "epo", "et": "est",
    "fi": "fin", "fr": "fra", "gu": "guj", "he": "heb", "hi": "hin", "hr": "hrv", "hu": "hun", "hy": "hye",
    "id": "ind", "it": "ita", "jv": "jav", "ja": "jpn", "kn": "kan", "ka": "kat", "km": "khm", "ko": "kor",
    "la": "lat", "lv": "lav", "lt": "lit", "ml": "mal", "mr": "mar", "mk": "mkd", "my": "mya", "ne": "nep",
    "nl": "nld", "nb": "nob", "or": "ori", "pa": "pan", "fa": "pes", "pl": "pol", "pt": "por", "ro": "ron",
    "ru": "rus", "si": "sin", "sk": "slk", "sl": "slv", "sn": "sna", "es": "spa", "sr": "srp", "sv": "swe",
    "ta": "tam", "te": "tel", "tl": "tgl", "th": "tha", "tk": "tuk", "tr": "tur", "uk": "ukr", "ur": "urd",
    "uz": "uzb", "vi": "vie", "yi": "yid", "zh": "zho", "zu": "zul",
}  # fmt: skip

LOCALES: Final[dict[str, str]] = {**_PAIRS, **{code: code for code in _PAIRS.values()}, "cmn": "cmn"}
"""Every accepted locale -> its ISO 639-3 code, in the order error messages list them (the ISO 639-1
codes, then the ISO 639-3 ones, then ``cmn``)."""


def iso639_3(locale: str) -> str:
    """The ISO 639-3 code of an accepted locale; an unknown code is returned lower-cased, as is."""
    code = locale.lower()
    return LOCALES.get(code, code)
