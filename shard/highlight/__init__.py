"""Highlighting, cropping and match positions of search hits (search.md §1.6, §7.8), as a pure library.

Per query: ``HitFormatter(FormatOptions.from_search(params, displayed), matcher, analyzer)``; per hit:
``formatted, matches_position = formatter.format(displayed_document)``. The query engine supplies the
``QueryMatcher``; ``WordTable`` is a ready-made one (``NO_MATCH`` for placeholder searches).
"""

from shard.highlight.formatter import HitFormatter, MatchBounds
from shard.highlight.matching import NO_MATCH, Needles, Phrase, QueryMatcher, WordMatch, WordTable
from shard.highlight.rules import FormatOptions

__all__ = [
    "NO_MATCH",
    "FormatOptions",
    "HitFormatter",
    "MatchBounds",
    "Needles",
    "Phrase",
    "QueryMatcher",
    "WordMatch",
    "WordTable",
]
