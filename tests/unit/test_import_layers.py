"""Imports run downward: a role never imports another role or the entry point, ``common`` imports no
role, and inside ``shard/`` each layer imports only its own or lower ones (tantivy's order). Read
from the source's syntax trees, function-level imports included, so a shortcut cannot hide."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROLES = ("gateway", "shard", "scheduler")
SHARD_LAYERS = {
    "analysis": 0,
    "embedding": 0,
    "index": 1,
    "facet": 2,
    "geo": 3,
    "vector": 3,
    "filter": 4,
    "highlight": 4,
    "query": 5,
    "batches": 6,
    "held": 7,
    "store": 8,
    "search_costs": 8,
    "search_results": 8,
    "metrics": 9,
    "server": 10,
}
"""Rank of each ``shard/`` package or top-level module; equal ranks do not import each other."""


def _modules(package: str) -> list[Path]:
    return sorted(path for path in (ROOT / package).rglob("*.py") if "_pb2" not in path.name)


def _imported(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def _shard_layer(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("package", ["common", *ROLES])
def test_roles_and_common_import_no_other_role(package: str) -> None:
    allowed = {"common", package}
    crossing = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _modules(package)
        for name in _imported(path)
        if name.split(".")[0] in {*ROLES, "sift"} - allowed
    ]
    assert crossing == []


def test_shard_layers_import_downward() -> None:
    upward = []
    for path in _modules("shard"):
        relative = path.relative_to(ROOT / "shard")
        own = relative.parts[0].removesuffix(".py")
        if own == "__init__":
            continue
        for name in _imported(path):
            if not name.startswith("shard."):
                continue
            target = _shard_layer(name)
            if target != own and SHARD_LAYERS[target] >= SHARD_LAYERS[own]:
                upward.append(f"shard/{relative} ({own}) imports {name} ({target})")
    assert upward == []


def test_every_shard_package_has_a_layer() -> None:
    found = {
        path.name.removesuffix(".py")
        for path in (ROOT / "shard").iterdir()
        if (path.is_dir() and (path / "__init__.py").exists()) or path.suffix == ".py"
    } - {"__init__"}
    assert found == set(SHARD_LAYERS)
