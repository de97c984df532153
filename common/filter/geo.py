"""Geo filter functions (search.md §4.4): ``_geoRadius``, ``_geoBoundingBox``, ``_geoPolygon``.

Coordinates are checked while parsing, in the order and with the messages the reference uses when it
evaluates them, so the tree only ever holds valid ones. A node's span is its first coordinate, which is where
the reference points the ``_geo/_geojson`` not-filterable error.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Final

import regex

from common.filter.ast import GeoBoundingBox, GeoPolygon, GeoRadius
from common.filter.errors import FilterError, span_of, syntax_error
from common.filter.lexer import skip_ws

_FLOAT: Final = regex.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_RADIUS_FORM: Final = (
    "The `_geoRadius` filter must be in the form:"
    " `_geoRadius(latitude, longitude, radius, optionalResolution)`."
)
_BOX_FORM: Final = (
    "The `_geoBoundingBox` filter expects two pairs of arguments: `_geoBoundingBox([latitude, longitude],"
    " [latitude, longitude])`."
)
_POLYGON_FORM: Final = (
    "The `_geoPolygon` filter doesn't match the expected format: `_geoPolygon([latitude, longitude],"
    " [latitude, longitude])`."
)

Number = tuple[int, int]
"""Where a number was written: ``(start, end)`` indexes in the filter."""


def format_float(value: float) -> str:
    """Rust's ``Display`` for f64: the shortest digits that round-trip, never an exponent, no ``.0``."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else "inf" if value > 0 else "-inf"
    text = format(Decimal(repr(value)), "f")
    return text[:-2] if text.endswith(".0") else text


def bad_latitude(lat: float) -> str:
    return f"Bad latitude `{format_float(lat)}`. Latitude must be contained between -90 and 90 degrees."


def bad_longitude(lng: float) -> str:
    wrapped = math.fmod(lng + 180.0, 360.0) if math.isfinite(lng) else math.nan  # Rust's rem_euclid
    wrapped = (wrapped + 360.0 if wrapped < 0 else wrapped) - 180.0
    return (
        f"Bad longitude `{format_float(lng)}`. Longitude must be contained between -180 and 180 degrees."
        f" Hint: try using `{format_float(wrapped)}` instead."
    )


def parse_radius(text: str, primary: int, pos: int) -> tuple[GeoRadius, int]:
    """``(lat, lng, meters[, resolution])`` after the name; ``primary`` is where the condition began."""
    args, end = _numbers(text, primary, pos, "(", ")", _RADIUS_FORM)
    if len(args) not in (3, 4):
        raise syntax_error(
            text, f"Was expecting 3 or 4 arguments for `_geoRadius`, but instead found {len(args)}.", primary
        )
    lat, lng = _finite(text, args[0]), _finite(text, args[1])
    _check_point(text, args[0], lat, args[1], lng)
    meters = _finite(text, args[2])
    resolution = None
    if len(args) == 4:
        resolution = min(max(int(_finite(text, args[3])), 0), 2**64 - 1)  # Rust's saturating `as usize`
        if not 3 <= resolution <= 1000:
            sentence = f"Invalid resolution `{resolution}`. Resolution must be between 3 and 1000."
            raise _at(text, args[3], sentence)
    return GeoRadius(lat, lng, meters, resolution, span_of(text, *args[0])), end


def parse_bounding_box(text: str, primary: int, pos: int) -> tuple[GeoBoundingBox, int]:
    """``([top, right], [bottom, left])`` after the name."""
    pairs, end = _pairs(text, primary, pos, _BOX_FORM)
    if len(pairs) != 2:
        raise syntax_error(text, _BOX_FORM, primary)
    (top, right), (bottom, left) = pairs
    values = [_finite(text, number) for number in (top, right, bottom, left)]
    _check_point(text, top, values[0], right, values[1])
    _check_point(text, bottom, values[2], left, values[3])
    if values[0] < values[2]:
        sentence = (
            f"The top latitude `{format_float(values[0])}` is below the bottom latitude"
            f" `{format_float(values[2])}`."
        )
        raise _at(text, left, sentence)
    box = GeoBoundingBox((values[0], values[1]), (values[2], values[3]), span_of(text, *top))
    return box, end


def parse_polygon(text: str, primary: int, pos: int) -> tuple[GeoPolygon, int]:
    """``([lat, lng], [lat, lng], [lat, lng], ...)`` after the name, a trailing comma allowed."""
    pairs, end = _pairs(text, primary, pos, _POLYGON_FORM)
    if len(pairs) < 3:
        sentence = f"The `_geoPolygon` filter expects at least 3 points but only {len(pairs)} were specified"
        raise syntax_error(text, sentence, primary)
    points = []
    for lat_at, lng_at in pairs:
        lat, lng = _finite(text, lat_at), _finite(text, lng_at)
        _check_point(text, lat_at, lat, lng_at, lng)
        points.append((lat, lng))
    return GeoPolygon(tuple(points), span_of(text, *pairs[0][0])), end


def _pairs(text: str, primary: int, pos: int, form: str) -> tuple[list[tuple[Number, Number]], int]:
    """``( [n, n], ... )``: each bracket must hold exactly two numbers."""
    if text[pos:pos + 1] != "(":
        raise syntax_error(text, form, primary)
    pairs: list[tuple[Number, Number]] = []
    pos = skip_ws(text, pos + 1)
    while text[pos:pos + 1] == "[":
        numbers, pos = _numbers(text, primary, pos, "[", "]", form)
        if len(numbers) != 2:
            sentence = f"Was expecting 2 coordinates but instead found {len(numbers)}."
            raise syntax_error(text, sentence, primary)
        pairs.append((numbers[0], numbers[1]))
        pos = skip_ws(text, pos)
        if text[pos:pos + 1] != ",":
            break
        pos = skip_ws(text, pos + 1)
    if text[pos:pos + 1] != ")":
        raise syntax_error(text, form, primary)
    return pairs, pos + 1


def _numbers(
    text: str, primary: int, pos: int, opening: str, closing: str, form: str
) -> tuple[list[Number], int]:
    """``opening n, n, ... closing`` with at least one number."""
    if text[pos:pos + 1] != opening:
        raise syntax_error(text, form, primary)
    numbers: list[Number] = []
    while True:
        match = _FLOAT.match(text, skip_ws(text, pos + 1))
        if match is None:
            raise syntax_error(text, form, primary)
        numbers.append(match.span())
        pos = skip_ws(text, match.end())
        if text[pos:pos + 1] != ",":
            break
    if text[pos:pos + 1] != closing:
        raise syntax_error(text, form, primary)
    return numbers, pos + 1


def _finite(text: str, number: Number) -> float:
    value = float(text[number[0]:number[1]])
    if not math.isfinite(value):
        raise _at(text, number, "Non finite floats are not supported")
    return value


def _check_point(text: str, lat_at: Number, lat: float, lng_at: Number, lng: float) -> None:
    if not -90.0 <= lat <= 90.0:
        raise _at(text, lat_at, bad_latitude(lat))
    if not -180.0 <= lng <= 180.0:
        raise _at(text, lng_at, bad_longitude(lng))


def _at(text: str, number: Number, sentence: str) -> FilterError:
    return syntax_error(text, sentence, number[0], number[1])
