"""The contract's ``openapi.json`` as the contract fuzzer checks responses against it.

``openapi.json`` describes the reference's v1.53; ``core.md`` and ``search.md`` are the contract Sift
claims, and they say where the OpenAPI file is wrong or newer than v1.50. Each correction below is one
such place, with the line that says so: it widens what a response may be, never what Sift sends, so a
violation the fuzzer reports is one where Sift breaks both documents.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OPENAPI = Path(__file__).resolve().parents[1].parent / "shared" / "api" / "openapi.json"


@dataclass(frozen=True)
class Correction:
    where: str
    reason: str
    apply: Callable[[dict[str, Any]], None]


def _ok_schema(spec: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    content: dict[str, Any] = spec["paths"][path][method]["responses"]["200"]["content"]
    return content["application/json"]


def _nullable_setting(path: str) -> Callable[[dict[str, Any]], None]:
    def apply(spec: dict[str, Any]) -> None:
        body = _ok_schema(spec, "get", path)
        body["schema"] = {"anyOf": [body["schema"], {"type": "null"}]}

    return apply


def _index_sizes_optional(spec: dict[str, Any]) -> None:
    stats = spec["components"]["schemas"]["IndexStats"]
    stats["required"] = [name for name in stats["required"] if name not in ("indexSize", "usedIndexSize")]


def _separate_multi_search(spec: dict[str, Any]) -> None:
    body = _ok_schema(spec, "post", "/multi-search")
    separate = {
        "type": "object",
        "required": ["results"],
        "properties": {"results": {"type": "array", "items": {"$ref": "#/components/schemas/SearchResult"}}},
    }
    body["schema"] = {"anyOf": [body["schema"], separate]}


def _network_version(spec: dict[str, Any]) -> None:
    view = copy.deepcopy(spec["components"]["schemas"]["Network"])
    view["properties"]["version"] = {"type": "string", "format": "uuid"}
    spec["components"]["schemas"]["NetworkView"] = view
    for method in ("get", "patch"):
        _ok_schema(spec, method, "/network")["schema"] = {"$ref": "#/components/schemas/NetworkView"}


CORRECTIONS = (
    Correction(
        "GET /indexes/{index_uid}/settings/distinct-attribute",
        "search.md §6 table: the default (and reset) value is null; OpenAPI says string only",
        _nullable_setting("/indexes/{index_uid}/settings/distinct-attribute"),
    ),
    Correction(
        "GET /indexes/{index_uid}/settings/search-cutoff-ms",
        "search.md §6 table and §6.10: null (1500 ms budget) by default; OpenAPI says integer only",
        _nullable_setting("/indexes/{index_uid}/settings/search-cutoff-ms"),
    ),
    Correction(
        "GET /indexes/{index_uid}/settings/localized-attributes",
        "search.md §6 table and §6.10: null by default; OpenAPI says array only",
        _nullable_setting("/indexes/{index_uid}/settings/localized-attributes"),
    ),
    Correction(
        "IndexStats (GET /stats, GET /indexes/{index_uid}/stats)",
        "core.md §3.1 (IndexStats): indexSize/usedIndexSize are OpenAPI 1.53 additions, absent in v1.50; "
        "OpenAPI marks them required",
        _index_sizes_optional,
    ),
    Correction(
        "POST /multi-search",
        "search.md §2.2: without `federation` the answer is {results: [...]}; OpenAPI documents "
        "only the federated shape",
        _separate_multi_search,
    ),
    Correction(
        "GET /network, PATCH /network",
        "core.md §3.15: the answer carries `version` (a uuid), as the reference's does; OpenAPI's "
        "Network object forbids any property it does not list",
        _network_version,
    ),
)


def load_spec() -> dict[str, Any]:
    """The OpenAPI document with every correction applied (the file itself is left as it is)."""
    spec: dict[str, Any] = json.loads(OPENAPI.read_text())
    corrected = copy.deepcopy(spec)
    for correction in CORRECTIONS:
        correction.apply(corrected)
    return corrected
