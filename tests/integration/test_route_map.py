"""Every route of the contract's route map (core.md §3.0 and the OpenAPI paths) is served: built, or
answering a contract-shaped error that says it is not supported (api/README.md: never a silent 404).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from gateway.routes.unsupported import ROUTES as UNSUPPORTED
from gateway.routes.unsupported import UnsupportedRoute
from tests.integration.search_support import assert_error
from tests.support.auth import gateway_routes
from tests.support.client import switch_features
from tests.support.cluster import RunningCluster

API = Path(__file__).resolve().parents[3] / "shared" / "api"
# OpenAPI 1.53 documents these streams; v1.50 has no such route and answers them as `/tasks/{uid}` and
# `/batches/{uid}` with a non-numeric uid (core.md §5), which Sift does too.
_SERVED_AS_UID_ROUTES = {("GET", "/tasks/stream"), ("GET", "/batches/stream")}


def _template(path: str) -> str:
    return re.sub(r"\{\w+\}", "{}", path)


def _contract_routes() -> set[tuple[str, str]]:
    routes = set()
    openapi = json.loads((API / "openapi.json").read_text())
    for path, methods in openapi["paths"].items():
        routes |= {(method.upper(), _template(path)) for method in methods}
    core = (API / "core.md").read_text()
    route_map = core[core.index("### 3.0 Route map") : core.index("### 3.1 ")]
    for match in re.finditer(
        r"`((?:GET|POST|PUT|PATCH|DELETE)(?:/(?:GET|POST|PUT|PATCH|DELETE))*) (/[^`\[]+)`", route_map
    ):
        routes |= {(method, _template(match.group(2))) for method in match.group(1).split("/")}
    return routes


@pytest.mark.skipif(not API.exists(), reason="the contract folder is not beside the repository")
def test_every_contract_route_is_served() -> None:
    served = {
        (route.method, _template("/" + re.sub(r"<\w+:str>", "{x}", route.path))) for route in gateway_routes()
    }
    missing = _contract_routes() - served - _SERVED_AS_UID_ROUTES
    assert not missing, sorted(missing)


def _path(template: str) -> str:
    return re.sub(r"<(\w+):str>", lambda m: {"index_uid": "books"}.get(m.group(1), "x"), template)


@pytest.mark.parametrize("route", UNSUPPORTED, ids=lambda r: f"{r.method} {r.path}")
def test_unsupported_routes_say_so(cluster: RunningCluster, route: UnsupportedRoute) -> None:
    method, path, gate = route.method, _path(route.path), route.gate
    url = f"{cluster.url}{path}"
    if gate is not None:
        assert_error(httpx.request(method, url, json={}), "feature_not_enabled", gate.message)
        switch_features(cluster, **{gate.feature: True})
    try:
        response = httpx.request(method, url, json={})
        assert_error(response, "bad_request", prefix=f"`{method} ")
        assert "is not supported yet by Sift: " in response.json()["message"]
    finally:
        if gate is not None:
            switch_features(cluster, **{gate.feature: False})
