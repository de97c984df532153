"""Which fields a query asks to highlight or crop, and how each leaf of a hit is to be formatted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from shard.analysis.attributes import paths_related

ALL = "*"


@dataclass(frozen=True)
class FormatOptions:
    """The search parameters that shape ``_formatted`` and ``_matchesPosition`` (search.md §1.1)."""

    attributes_to_highlight: Sequence[str] | None = None
    attributes_to_crop: Sequence[str] | None = None
    """Entries ``attr`` or ``attr:N``."""
    crop_length: int = 10
    crop_marker: str = "…"
    highlight_pre_tag: str = "<em>"
    highlight_post_tag: str = "</em>"
    show_matches_position: bool = False
    attributes_to_retrieve: Sequence[str] | None = None
    """None or containing ``*``: every displayed attribute."""
    displayed_attributes: Sequence[str] | None = None
    """The index's ``displayedAttributes``; None or containing ``*``: all. Others cannot be formatted."""

    @classmethod
    def from_search(
        cls, params: Mapping[str, Any], displayed_attributes: Sequence[str] | None
    ) -> FormatOptions:
        """From a validated search body (camelCase keys; absent or null = default)."""
        defaults = cls()

        def get(key: str, default: Any) -> Any:
            value = params.get(key)
            return default if value is None else value

        return cls(
            attributes_to_highlight=params.get("attributesToHighlight"),
            attributes_to_crop=params.get("attributesToCrop"),
            crop_length=get("cropLength", defaults.crop_length),
            crop_marker=get("cropMarker", defaults.crop_marker),
            highlight_pre_tag=get("highlightPreTag", defaults.highlight_pre_tag),
            highlight_post_tag=get("highlightPostTag", defaults.highlight_post_tag),
            show_matches_position=get("showMatchesPosition", False),
            attributes_to_retrieve=params.get("attributesToRetrieve"),
            displayed_attributes=displayed_attributes,
        )


class LeafRule(NamedTuple):
    highlight: bool
    crop: int
    """Words kept; 0 = no cropping."""


class FormatRules:
    """The requested rules, resolved once per query; per-leaf answers are memoised (paths repeat per hit)."""

    def __init__(self, options: FormatOptions) -> None:
        displayed = options.displayed_attributes
        shown = displayed is None or ALL in displayed

        def valid(name: str) -> bool:
            return shown or name == ALL or any(paths_related(name, field) for field in displayed or ())

        highlight = [name for name in options.attributes_to_highlight or () if valid(name)]
        self._highlight_all = ALL in highlight
        self._highlight = tuple(name for name in highlight if name != ALL)
        crops: dict[str, int] = {}
        for entry in options.attributes_to_crop or ():
            name, length = _crop_entry(entry, options.crop_length)
            if name == ALL:  # it covers every field, so it overrides the earlier entries
                crops = dict.fromkeys(crops, length)
            if valid(name):
                crops[name] = length
        self._crop_all = crops.pop(ALL, None)
        self._crops = crops
        self.requested = bool(highlight) or self._crop_all is not None or bool(crops)
        """Whether ``_formatted`` is shown: at least one valid attribute to highlight or crop."""
        retrieve = options.attributes_to_retrieve
        everything = retrieve is None or ALL in retrieve or self._highlight_all or self._crop_all is not None
        self.fields: tuple[str, ...] | None = (
            None if everything else tuple(dict.fromkeys([*(retrieve or ()), *self._highlight, *crops]))
        )
        """Selectors of the fields ``_formatted`` shows; None = every displayed field."""
        self._rules: dict[str, LeafRule] = {}

    def rule(self, path: str) -> LeafRule:
        """Rules of every requested path that is the leaf's, a parent's or a child's, merged.

        Highlighting if any asks for it; the crop length of the most specific path, else of ``*``.
        """
        rule = self._rules.get(path)
        if rule is None:
            highlight = self._highlight_all or any(paths_related(name, path) for name in self._highlight)
            crops = [(len(name), length) for name, length in self._crops.items() if paths_related(name, path)]
            crop = max(crops)[1] if crops else self._crop_all or 0
            rule = self._rules[path] = LeafRule(highlight, crop)
        return rule


def _crop_entry(entry: str, default: int) -> tuple[str, int]:
    """``attr:N`` -> (attr, N); a missing or unparsable N is the query's ``cropLength``."""
    name, colon, length = entry.partition(":")
    digits = length.removeprefix("+")
    if colon and digits.isascii() and digits.isdigit():
        return name, int(digits)
    return name, default
