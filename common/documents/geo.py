"""``_geo`` validation at indexing (core.md error ``invalid_document_geo_field``).

Only an index that uses geo (``_geo`` filterable or sortable) checks it, as the reference does; a task
holding one bad document fails whole, with the reference's messages in its order of checks: not an
object, missing coordinates, unexpected fields, then coordinates that are not finite numbers (numbers
or numeric strings). ``null`` or no ``_geo`` means the document has no point.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from common.documents.primary_key import DocumentError

_CODE = "invalid_document_geo_field"


def uses_geo(settings: Mapping[str, Any]) -> bool:
    """``_geo`` named in ``filterableAttributes`` (string rules only) or ``sortableAttributes``."""
    filterable: Sequence[Any] = settings.get("filterableAttributes") or []
    return "_geo" in filterable or "_geo" in (settings.get("sortableAttributes") or [])


def check_geo(index_uid: str, document: Mapping[str, Any], document_id: Any) -> None:
    value = document.get("_geo")
    if value is None:
        return
    prefix = f"Index `{index_uid}`: "
    where = f"in the document with the id: `{_json(document_id)}`"
    if not isinstance(value, dict):
        raise DocumentError(
            _CODE,
            f"{prefix}The `_geo` field {where} is not an object. Was expecting an object with the"
            f" `_geo.lat` and `_geo.lng` fields but instead got `{_json(value)}`.",
        )
    lat, lng = value.get("lat", _ABSENT), value.get("lng", _ABSENT)
    if lat is _ABSENT or lng is _ABSENT:
        if lat is _ABSENT and lng is _ABSENT:
            missing = "latitude nor longitude {where}. Was expecting `_geo.lat` and `_geo.lng` fields."
        elif lat is _ABSENT:
            missing = "latitude {where}. Was expecting a `_geo.lat` field."
        else:
            missing = "longitude {where}. Was expecting a `_geo.lng` field."
        raise DocumentError(_CODE, f"{prefix}Could not find {missing.format(where=where)}")
    extra = {key: item for key, item in value.items() if key not in ("lat", "lng")}
    if extra:
        raise DocumentError(
            _CODE,
            f"{prefix}The `_geo` field {where} contains the following unexpected fields:"
            f" `{_json(extra)}`.",
        )
    bad_lat, bad_lng = coordinate(lat) is None, coordinate(lng) is None
    if bad_lat and bad_lng:
        raise DocumentError(
            _CODE,
            f"{prefix}Could not parse latitude nor longitude {where}. Was expecting finite numbers but"
            f" instead got `{_json(lat)}` and `{_json(lng)}`.",
        )
    if bad_lat or bad_lng:
        name, raw = ("latitude", lat) if bad_lat else ("longitude", lng)
        raise DocumentError(
            _CODE,
            f"{prefix}Could not parse {name} {where}. Was expecting a finite number but instead got"
            f" `{_json(raw)}`.",
        )


def coordinate(value: Any) -> float | None:
    """A finite number, or a string holding one (trimmed); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if not text.isascii() or "_" in text:
            return None
        try:
            number = float(text)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


_ABSENT = object()


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()
