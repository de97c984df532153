"""Helpers for tests of a cluster protected by a master key."""

from __future__ import annotations

import itertools
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from common.config import load_config
from gateway.app import create_app
from tests.support.cluster import RunningCluster

MASTER_KEY = "sift-test-master-key-0123456789"
_APP_NAMES = itertools.count()


def secured_cluster(*options: str, **kwargs: Any) -> RunningCluster:
    return RunningCluster("--master-key", MASTER_KEY, *options, **kwargs)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def rfc3339_in(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def create_key(cluster: RunningCluster, **fields: Any) -> dict[str, Any]:
    """``POST /keys`` with the master key; ``expiresAt`` defaults to null."""
    body = {"expiresAt": None, **fields}
    response = httpx.post(f"{cluster.url}/keys", json=body, headers=bearer(MASTER_KEY))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


@dataclass(frozen=True, order=True)
class Route:
    method: str
    path: str
    """Sanic's template without the leading slash, e.g. ``indexes/<index_uid:str>/search``."""
    action: str


def gateway_routes() -> list[Route]:
    """Every route the gateway serves, read from its router: a new route cannot be left out."""
    with tempfile.TemporaryDirectory() as scratch:
        config = load_config(["gateway"], {}, cwd=Path(scratch)).config
        app = create_app(config, name=f"routes{next(_APP_NAMES)}")
    return sorted(
        Route(method, route.path, route.ctx.action)
        for route in app.router.routes
        for method in route.methods
        if method != "OPTIONS"
    )
