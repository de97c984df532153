"""Sort expressions (search.md §5, §1.9): ``field:asc|desc`` and ``_geoPoint(lat, lng):asc|desc``.

Parsing follows the reference's ``AscDesc`` rules (split at the last ``:``, ``_geoPoint(`` bodies split at
the first comma) so that every malformed entry gets its message; ``check_sort`` then applies the index's
settings. Both raise ``SortError``; the route picks the code (``invalid_search_sort``, ...).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from common.errors import ParameterError, index_prefix
from common.filter.geo import bad_latitude, bad_longitude

_RESERVED: Final = frozenset(
    {"_geo", "_geoDistance", "_geoPoint", "_geoRadius", "_geoBoundingBox", "_geojson", "_geoPolygon"}
)
_USE_GEO_POINT: Final = (
    " Use the _geoPoint(latitude, longitude) built-in rule to sort on _geo field coordinates."
)


class SortError(ParameterError):
    """A sort the API refuses."""


@dataclass(frozen=True, slots=True)
class FieldSort:
    field: str
    ascending: bool


@dataclass(frozen=True, slots=True)
class GeoSort:
    """Distance from ``point`` (lat, lng)."""

    point: tuple[float, float]
    ascending: bool


SortCriterion: TypeAlias = FieldSort | GeoSort


def parse_sort(entries: Sequence[str]) -> list[SortCriterion]:
    return [parse_criterion(entry) for entry in entries]


def parse_criterion(entry: str) -> SortCriterion:
    member, colon, order = entry.rpartition(":")
    if not colon or order not in ("asc", "desc"):
        raise SortError(
            "Invalid syntax for the sort parameter: expected expression ending by `:asc` or `:desc`, found"
            f" `{entry}`."
        )
    ascending = order == "asc"
    if member.startswith("_geoPoint(") and member.endswith(")"):
        return GeoSort(_geo_point(member), ascending)
    if member in _RESERVED or member.startswith(("_geoRadius(", "_geoBoundingBox(")):
        raise SortError(_reserved(member))
    return FieldSort(member, ascending)


def _geo_point(member: str) -> tuple[float, float]:
    lat_text, comma, lng_text = member[len("_geoPoint("):-1].partition(",")
    lat, lng = _rust_float(lat_text.strip()), _rust_float(lng_text.strip())
    if not comma or lat is None or lng is None:
        raise SortError(_reserved(member))
    if not -90.0 <= lat <= 90.0:
        raise SortError(bad_latitude(lat))
    if not -180.0 <= lng <= 180.0:
        raise SortError(bad_longitude(lng))
    return lat, lng


def _rust_float(text: str) -> float | None:
    """Rust's ``str::parse::<f64>``: Python's ``float`` without its underscores and non-ASCII digits."""
    if not text.isascii() or "_" in text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _reserved(name: str) -> str:
    """The message for a reserved name, by the reference's precedence."""
    if name.startswith("_geoPoint"):
        return (
            "Invalid syntax for the geo parameter: expected expression formated like `_geoPoint(latitude,"
            f" longitude)` and ending by `:asc` or `:desc`, found `{name}`."
        )
    for prefix in ("_geoRadius", "_geoBoundingBox"):
        if name.startswith(prefix):
            name = prefix
    message = f"`{name}` is a reserved keyword and thus can't be used as a sort expression."
    return message + _USE_GEO_POINT if name in ("_geo", "_geoRadius", "_geoBoundingBox") else message


def check_sort(
    criteria: Sequence[SortCriterion],
    *,
    ranking_rules: Sequence[str] | None,
    sortable: Collection[str],
    displayed: Sequence[str],
    index_uid: str | None,
) -> None:
    """Every criterion must be sortable (``_geo`` for geo sorts) and, for a search, the index rank by
    ``sort``; ``ranking_rules`` is None for document reads, which sort by the criteria alone.
    ``index_uid`` opens the messages (None: no prefix, see ``index_prefix``)."""
    if not criteria:
        return
    if ranking_rules is not None and "sort" not in ranking_rules:
        raise SortError(
            f"{index_prefix(index_uid)}You must specify where `sort` is listed in the rankingRules setting to"
            " use the sort parameter at search time."
        )
    for criterion in criteria:
        if isinstance(criterion, GeoSort):
            field, allowed = "_geo", "_geo" in sortable
        else:
            field = criterion.field
            allowed = any(field == name or field.startswith(name + ".") for name in sortable)
        if not allowed:
            available = _available(sortable, displayed)
            raise SortError(f"{index_prefix(index_uid)}Attribute `{field}` is not sortable. {available}")


def _available(sortable: Collection[str], displayed: Sequence[str]) -> str:
    """Sortable attributes a client may see; the others only as ``<..hidden-attributes>``."""
    visible = sorted(set(sortable) if "*" in displayed else set(sortable) & set(displayed))
    if not visible:
        return "This index does not have configured sortable attributes."
    hidden = ", <..hidden-attributes>" if len(visible) < len(set(sortable)) else ""
    return f"Available sortable attributes are: `{', '.join(visible)}{hidden}`."
