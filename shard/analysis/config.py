"""The index settings that change how text is analysed, in a canonical, hashable form."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from shard.analysis.locales import iso639_3
from shard.analysis.normalize import fold

LocalizedRule = tuple[tuple[str, ...], tuple[str, ...]]
"""(attributePatterns, locales as ISO 639-3 codes)."""


def _canonical(values: Iterable[str] | None) -> tuple[str, ...]:
    """Sorted and deduplicated, so that equal sets give equal configs (and keys)."""
    return tuple(sorted({value for value in values or () if value}))


@dataclass(frozen=True)
class AnalysisConfig:
    stop_words: frozenset[str] = frozenset()
    """Normalised (folded) forms."""
    separator_tokens: tuple[str, ...] = ()
    non_separator_tokens: tuple[str, ...] = ()
    dictionary: tuple[str, ...] = ()
    localized_attributes: tuple[LocalizedRule, ...] = ()
    """In settings order: the first rule whose pattern matches a field wins."""

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> AnalysisConfig:
        """From an index's settings as GET /indexes/{uid}/settings shapes them; missing keys are defaults."""
        rules = settings.get("localizedAttributes") or ()
        return cls(
            stop_words=frozenset(
                folded for word in settings.get("stopWords") or () if (folded := fold(word))
            ),
            separator_tokens=_canonical(settings.get("separatorTokens")),
            non_separator_tokens=_canonical(settings.get("nonSeparatorTokens")),
            dictionary=_canonical(settings.get("dictionary")),
            localized_attributes=tuple(
                (
                    tuple(rule["attributePatterns"]),
                    tuple(dict.fromkeys(iso639_3(locale) for locale in rule["locales"])),
                )
                for rule in rules
            ),
        )

    def analysis_key(self) -> tuple[object, ...]:
        """Equal keys guarantee identical indexing output, so a changed key means re-indexing."""
        return (
            tuple(sorted(self.stop_words)),
            self.separator_tokens,
            self.non_separator_tokens,
            self.dictionary,
            self.localized_attributes,
        )
