"""The default document template's native rendering matches python-liquid's, value for value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from common.document_template import DEFAULT_TEMPLATE, default_text, parse_template

MOVIES = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "movies-1688" / "movies.json"
ODD: list[dict[str, Any]] = [
    {"a": 1.5, "b": True, "c": None, "d": [1, "x", [2, None]], "e": {"k": "v", "n": {"m": 1.0}}, "f": 2.0},
    {"empty": "", "zero": 0, "false": False, "list": [], "obj": {}, "big": 1e20, "neg": -3.25},
]


def _through_liquid(document: dict[str, Any], searchable: set[str] | None) -> str:
    fields = [
        {"name": name, "value": value, "is_searchable": searchable is None or name in searchable}
        for name, value in document.items()
    ]
    return str(parse_template(DEFAULT_TEMPLATE).render(doc=document, fields=fields))


@pytest.mark.parametrize("searchable", [None, {"a", "title", "zero", "e"}])
def test_default_text_is_the_liquid_rendering(searchable: set[str] | None) -> None:
    documents = ODD + (json.loads(MOVIES.read_text())[:200] if MOVIES.exists() else [])
    check = None if searchable is None else searchable.__contains__
    for document in documents:
        assert default_text(document, check) == _through_liquid(document, searchable), document
