"""Path normalisation and CORS preflight dispatch, done where Sanic resolves routes.

The contract normalises trailing and repeated slashes before routing, and answers every ``OPTIONS``
preflight (on any path, known or not) before routing and authentication. Sanic resolves the route
before any middleware runs, so both belong in the router.
"""

from __future__ import annotations

import re
from typing import Any

from sanic.router import Router

PREFLIGHT_PATH = "/__cors_preflight"
_REPEATED_SLASHES = re.compile(r"/{2,}")


def normalize_path(path: str) -> str:
    path = _REPEATED_SLASHES.sub("/", path)
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/") or "/"
    return path


class GatewayRouter(Router):
    def get(self, path: str, method: str, host: str | None) -> Any:  # type: ignore[override]
        if method == "OPTIONS":
            return super().get(PREFLIGHT_PATH, "OPTIONS", host)
        return super().get(normalize_path(path), method, host)
