"""What each locale code (``common/locales.py``) means to the analyser: its stemmer, its ICU segmenter."""

from __future__ import annotations

import functools

import Stemmer

from common.locales import iso639_3

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


@functools.cache
def icu_locale(locales: tuple[str, ...]) -> str:
    """The ICU locale for segmenting space-less scripts: the first locale that has one, else ``und``."""
    for locale in locales:
        icu = _ICU_LOCALES.get(iso639_3(locale))
        if icu is not None:
            return icu
    return "und"
