"""Locale codes of ``localizedAttributes`` and what each one means to the analyser."""

from __future__ import annotations

import functools

import Stemmer

_PAIRS = {
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

LOCALES: dict[str, str] = {**_PAIRS, **{code: code for code in _PAIRS.values()}, "cmn": "cmn"}
"""Every accepted locale (search.md §6.10: ISO 639-1 and ISO 639-3 codes, plus ``cmn``) -> ISO 639-3."""

_SNOWBALL = {
    "ara": "arabic", "cat": "catalan", "ces": "czech", "dan": "danish", "deu": "german", "ell": "greek",
    "eng": "english", "epo": "esperanto", "est": "estonian", "fin": "finnish", "fra": "french",
    "hin": "hindi", "hun": "hungarian", "hye": "armenian", "ind": "indonesian", "ita": "italian",
    "lit": "lithuanian", "nep": "nepali", "nld": "dutch", "nob": "norwegian", "pes": "persian",
    "pol": "polish", "por": "portuguese", "ron": "romanian", "rus": "russian", "spa": "spanish",
    "srp": "serbian", "swe": "swedish", "tam": "tamil", "tur": "turkish", "yid": "yiddish",
}  # fmt: skip
STEMMER_ALGORITHMS: dict[str, str] = {
    code: algorithm for code, algorithm in _SNOWBALL.items() if algorithm in Stemmer.algorithms()
}
"""ISO 639-3 code -> PyStemmer (Snowball) algorithm, for the languages that have one."""

_ICU_LOCALES = {"jpn": "ja", "zho": "zh", "cmn": "zh", "tha": "th", "khm": "km", "mya": "my"}


def iso639_3(locale: str) -> str:
    """The ISO 639-3 code of an accepted locale; an unknown code is returned lower-cased, as is."""
    code = locale.lower()
    return LOCALES.get(code, code)


@functools.cache
def icu_locale(locales: tuple[str, ...]) -> str:
    """The ICU locale for segmenting space-less scripts: the first locale that has one, else ``und``."""
    for locale in locales:
        icu = _ICU_LOCALES.get(iso639_3(locale))
        if icu is not None:
            return icu
    return "und"
