"""The filter expression tree (search.md §4): what the parser produces and the shards evaluate.

The tree is shared so that parsing (and its position-carrying errors) lives in one place while each shard
evaluates the same structure on its own bitmaps. Field names and values are kept as the user wrote them
(unquoted and unescaped); normalisation is the evaluator's job because it follows the index's facet rules.
Spans are 1-based character columns, the ``start:end`` of the contract's error messages, so evaluation
errors (an attribute that is not filterable, an operator its rule forbids) can point at the fragment.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal, TypeAlias

CompareOp = Literal["=", "!=", ">", ">=", "<", "<="]


@dataclass(frozen=True, slots=True)
class Span:
    """1-based character columns of a fragment of the original filter string (end = start + length).

    ``source`` is that filter string (an array-form filter has several), so that errors found after parsing
    can print the contract's position line; it takes no part in comparisons.
    """

    start: int
    end: int
    source: str = dataclasses.field(default="", compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Token:
    """A field name or a value: its unescaped text and where it was written."""

    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class Compare:
    """``field op value``; ``!=`` is kept as written (it needs the equality feature, like ``=``)."""

    field: Token
    op: CompareOp
    value: Token


@dataclass(frozen=True, slots=True)
class Between:
    """``field low TO high``, inclusive on both ends."""

    field: Token
    low: Token
    high: Token


@dataclass(frozen=True, slots=True)
class In:
    """``field IN [v, ...]``; ``NOT IN`` is ``Not(In(...))``."""

    field: Token
    values: tuple[Token, ...]


@dataclass(frozen=True, slots=True)
class Exists:
    """``field EXISTS``; ``NOT EXISTS`` is ``Not(Exists(...))``."""

    field: Token


@dataclass(frozen=True, slots=True)
class IsNull:
    """``field IS NULL``; ``IS NOT NULL`` is ``Not(IsNull(...))``."""

    field: Token


@dataclass(frozen=True, slots=True)
class IsEmpty:
    """``field IS EMPTY``; ``IS NOT EMPTY`` is ``Not(IsEmpty(...))``."""

    field: Token


@dataclass(frozen=True, slots=True)
class Contains:
    """``field CONTAINS value`` (experimental ``containsFilter``); negation wraps it in ``Not``.

    ``keyword`` is where ``CONTAINS`` is written: the feature error points there.
    """

    field: Token
    value: Token
    keyword: Span | None = None


@dataclass(frozen=True, slots=True)
class StartsWith:
    """``field STARTS WITH value``; negation wraps it in ``Not``."""

    field: Token
    value: Token


@dataclass(frozen=True, slots=True)
class VectorsExists:
    """``_vectors[.embedder[...]] EXISTS``: ``path`` is everything after ``_vectors`` (may be empty)."""

    path: str
    span: Span


@dataclass(frozen=True, slots=True)
class GeoRadius:
    """``_geoRadius(lat, lng, meters[, resolution])``, validated ranges."""

    lat: float
    lng: float
    meters: float
    resolution: int | None
    span: Span


@dataclass(frozen=True, slots=True)
class GeoBoundingBox:
    """``_geoBoundingBox([top, right], [bottom, left])``; right < left wraps across the antimeridian."""

    top_right: tuple[float, float]
    bottom_left: tuple[float, float]
    span: Span


@dataclass(frozen=True, slots=True)
class GeoPolygon:
    """``_geoPolygon([lat, lng], ...)``, at least three points."""

    points: tuple[tuple[float, float], ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Foreign:
    """``_foreign(field, condition)`` (experimental feature ``foreignKeys``): documents whose ``field``
    holds the id of a document of the field's foreign index that matches ``condition``."""

    field: Token
    condition: Filter
    inner: str
    """The filter text with everything but the condition blanked (line breaks kept): run on the foreign
    index, its errors point where the reference's do."""
    start: int
    """Indexes of ``_foreign(...)`` in its filter string, which the gateway rewrites
    (``gateway/foreign.py``)."""
    end: int


@dataclass(frozen=True, slots=True)
class Not:
    child: Filter


@dataclass(frozen=True, slots=True)
class And:
    children: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Or:
    children: tuple[Filter, ...]


Condition: TypeAlias = (
    Compare | Between | In | Exists | IsNull | IsEmpty | Contains | StartsWith | VectorsExists
    | GeoRadius | GeoBoundingBox | GeoPolygon | Foreign
)
Filter: TypeAlias = Condition | Not | And | Or
