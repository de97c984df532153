"""``GET /version``."""

from __future__ import annotations

import subprocess
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from sanic import Blueprint, HTTPResponse, Request

from gateway.http.responses import json_response

bp = Blueprint("version")

_SOURCE_DIR = Path(__file__).resolve().parents[2]


@bp.get("/version", ctx_action="version")
async def get_version(_request: Request) -> HTTPResponse:
    return json_response(build_info())


@cache
def build_info() -> dict[str, str]:
    """Commit of the running source; ``unknown`` when it is not a git checkout (e.g. a wheel)."""
    try:
        package_version = version("sift")
    except PackageNotFoundError:
        package_version = "unknown"
    sha, date = "unknown", "unknown"
    try:
        out = subprocess.run(
            ["git", "-C", str(_SOURCE_DIR), "log", "-1", "--format=%H %cI"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.split()
        if len(out) == 2:
            sha, date = out
    except (OSError, subprocess.SubprocessError):
        pass
    return {"commitSha": sha, "commitDate": date, "pkgVersion": package_version}
