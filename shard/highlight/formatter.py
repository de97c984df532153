"""Building a hit's ``_formatted`` and ``_matchesPosition`` (search.md §1.6) over nested documents."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import orjson

from common.documents.projection import select_attributes
from shard.analysis import Analyzer
from shard.highlight.crop import crop_window
from shard.highlight.matching import AnalysedText, Match, MatchFinder, QueryMatcher
from shard.highlight.rules import FormatOptions, FormatRules

Document = dict[str, Any]
MatchBounds = dict[str, Any]
"""``{"start", "length"}`` in bytes of the UTF-8 text, plus ``"indices"`` (array positions) inside arrays."""


class HitFormatter:
    """One per query: the rules, the matcher's memo and the analyser's caches then serve every hit."""

    def __init__(self, options: FormatOptions, matcher: QueryMatcher, analyzer: Analyzer) -> None:
        self._options = options
        self._rules = FormatRules(options)
        self._finder = MatchFinder(matcher, analyzer)
        self._locales_for = functools.cache(analyzer.locales_for)  # per query: a few field paths

    def format(self, displayed: Document) -> tuple[Document | None, dict[str, list[MatchBounds]] | None]:
        """(``_formatted``, ``_matchesPosition``), each None when the query does not ask for it.

        ``displayed`` is the stored document restricted to ``displayedAttributes``, in stored order.
        """
        hit = _Hit(self._finder, self._locales_for, displayed)
        formatted = None
        if self._rules.requested:
            fields = self._rules.fields
            source = displayed if fields is None else select_attributes(displayed, fields)
            formatted = {name: self._format(hit, name, value) for name, value in source.items()}
        positions = None
        if self._options.show_matches_position:
            found: dict[str, list[MatchBounds]] = {}
            if not self._finder.matches_nothing:
                for name, value in displayed.items():
                    _collect_bounds(hit, name, value, (), found)
            positions = dict(sorted(found.items()))
        return formatted, positions

    def _format(self, hit: _Hit, path: str, value: Any) -> Any:
        if isinstance(value, dict):
            return {name: self._format(hit, f"{path}.{name}", item) for name, item in value.items()}
        if isinstance(value, list):
            if self._rules.rule(path)[1]:
                return [self._format(hit, path, item) for item in value]
            ruled_out = hit.ruled_out  # inline: arrays of strings (cast lists) are long
            return [
                item if type(item) is str and item in ruled_out else self._format(hit, path, item)
                for item in value
            ]
        if isinstance(value, bool) or value is None:
            return value
        text = value if isinstance(value, str) else _number_text(value)
        if text in hit.ruled_out and not self._rules.rule(path)[1]:  # a crop shortens it anyway
            return text
        return self._format_text(hit, path, text)

    def _format_text(self, hit: _Hit, path: str, text: str) -> str:
        highlight, crop = self._rules.rule(path)
        if crop:
            analysed = hit.analyse(path, text)
            start, end = crop_window(analysed, crop, len(text))
            matches = analysed.matches
        elif not highlight or self._finder.matches_nothing:
            return text
        else:
            matches = hit.matches(path, text)
            if not matches:
                return text
            start, end = 0, len(text)
        options = self._options
        parts = [options.crop_marker] if start > 0 else []
        if highlight:
            _highlight(text, start, end, matches, options, parts)
        else:
            parts.append(text[start:end])
        if end < len(text):
            parts.append(options.crop_marker)
        return "".join(parts)


class _Hit:
    """Analyses of one hit's texts: a leaf both formatted and positioned is tokenised once."""

    def __init__(
        self, finder: MatchFinder, locales_for: Callable[[str], tuple[str, ...]], displayed: Document
    ) -> None:
        self._finder = finder
        self._locales_for = locales_for
        self._analysed: dict[tuple[str, tuple[str, ...]], AnalysedText] = {}
        self._matches: dict[tuple[str, tuple[str, ...]], list[Match]] = {}
        # Every ASCII text of the hit screened by one search: most hold no match and are then shown
        # as they are, without a call per text.
        screened: list[str] = []
        if not finder.matches_nothing:
            _collect_texts(displayed, screened)
            screened = [text for text in screened if text.isascii()]
        self.ruled_out = frozenset(screened).difference(
            map(screened.__getitem__, finder.texts_that_may_match(screened))
        )
        """Texts of the hit that its screen showed to hold no match."""

    def matches(self, path: str, text: str) -> list[Match]:
        """The text's matches, found the cheapest way: most texts are ruled out without tokenising."""
        if text in self.ruled_out:
            return []
        key = (text, self._locales_for(path))
        analysed = self._analysed.get(key)
        if analysed is not None:
            return analysed.matches
        found = self._matches.get(key)
        if found is None:
            found = self._matches[key] = self._finder.matches(*key) if self._finder.may_match(*key) else []
        return found

    def analyse(self, path: str, text: str) -> AnalysedText:
        key = (text, self._locales_for(path))
        analysed = self._analysed.get(key)
        if analysed is None:
            analysed = self._analysed[key] = self._finder.analyse(*key)
        return analysed


def _collect_texts(container: dict[str, Any] | list[Any], texts: list[str]) -> None:
    """Append the texts of a document (or of one of its objects or arrays), at any depth: its strings,
    and its numbers as they are matched."""
    for value in container.values() if isinstance(container, dict) else container:
        if type(value) is str:
            texts.append(value)
        elif isinstance(value, dict | list):
            _collect_texts(value, texts)
        elif not (isinstance(value, bool) or value is None):
            texts.append(_number_text(value))


def _number_text(value: int | float) -> str:
    """A number as JSON prints it, as the indexer analyses it."""
    return str(value) if isinstance(value, int) else orjson.dumps(value).decode()


def _highlight(
    text: str, start: int, end: int, matches: list[Match], options: FormatOptions, parts: list[str]
) -> None:
    """Append ``text[start:end]`` with tags around the matches, clipped to the window."""
    pre, post = options.highlight_pre_tag, options.highlight_post_tag
    cursor = start
    for match in matches:
        if match.start >= end:
            break
        begin = max(match.start, cursor)
        stop = min(match.end, end)
        if begin < stop:
            parts += (text[cursor:begin], pre, text[begin:stop], post)
            cursor = stop
    parts.append(text[cursor:end])


def _collect_bounds(
    hit: _Hit, path: str, value: Any, indices: tuple[int, ...], found: dict[str, list[MatchBounds]]
) -> None:
    """Match bounds of every string and number leaf under ``path``, keyed by dotted leaf path."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, dict):
        for name, item in value.items():
            _collect_bounds(hit, f"{path}.{name}", item, indices, found)
        return
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if not (type(item) is str and item in hit.ruled_out):
                _collect_bounds(hit, path, item, (*indices, index), found)
        return
    elif isinstance(value, bool) or value is None:
        return
    else:
        text = _number_text(value)
    matches = hit.matches(path, text)
    if matches:
        found.setdefault(path, []).extend(_bounds(text, matches, indices))


def _bounds(text: str, matches: list[Match], indices: tuple[int, ...]) -> list[MatchBounds]:
    """Character spans to UTF-8 byte spans, converting each stretch of text once."""
    bounds: list[MatchBounds] = []
    ascii_only = text.isascii()
    char = byte = 0
    for match in matches:
        if ascii_only:
            start, length = match.start, match.end - match.start
        else:  # phrases may overlap, so a match can start before the previous one ends
            if match.start >= char:
                byte += len(text[char : match.start].encode())
            else:
                byte -= len(text[match.start : char].encode())
            char = match.start
            start, length = byte, len(text[match.start : match.end].encode())
        entry: MatchBounds = {"start": start, "length": length}
        if indices:
            entry["indices"] = list(indices)
        bounds.append(entry)
    return bounds
