"""The search preview page's static files (``index.html``, ``preview.css``, ``preview.js``).

Plain files shipped in the package and read once: no CDN, no build step, nothing fetched at run time.
The gateway serves them only in ``--env development`` (``gateway/routes/preview.py``).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

PAGE = "index.html"
ASSETS: dict[str, str] = {
    "preview.css": "text/css; charset=utf-8",
    "preview.js": "text/javascript; charset=utf-8",
}
"""The files served under ``/preview/``, by name, with their content type; no other name is served."""


@cache
def read(name: str) -> bytes:
    return files(__name__).joinpath(name).read_bytes()
