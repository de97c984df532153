"""What the browser tests share: the cluster's contents, screenshots kept as artefacts, keyboard
navigation, and the InstantSearch example built and served on loopback."""

from __future__ import annotations

import fcntl
import functools
import http.server
import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, Request

from tests.support.auth import MASTER_KEY
from tests.support.client import client_for, wait_task
from tests.support.cluster import REPO_ROOT, RunningCluster

MOVIES = json.loads((REPO_ROOT.parent / "shared" / "datasets" / "movies-1688" / "movies.json").read_bytes())
SCREENSHOTS = REPO_ROOT / "bench" / "results" / "browser"
"""Where every screenshot the tests take is kept (``bench/results/`` is not committed)."""
EXAMPLE = REPO_ROOT / "deploy" / "instantsearch"


BOOKS = [
    {"id": 1, "title": "Dune", "author": "Frank Herbert"},
    {"id": 2, "title": "Emma", "author": "Jane Austen"},
    # Document text is shown as text: markup in it is never parsed.
    {"id": 3, "title": "<img src=x id=injected> Markup", "author": "<b>nobody</b>"},
]
SEARCHABLE = ["title", "overview", "tagline", "genres", "director"]
KEY_ITEM = "sift-preview:api-key"
"""Where the preview page keeps the API key (local storage)."""


def fill(cluster: RunningCluster) -> None:
    """The movies, with ``genres`` and ``director`` filterable (the pages' facets), and a small index of
    books for the index picker. The cast and companies are shown, not searched: indexing them would
    double the set-up time (measured 29.5 / 50.2 s against 14.5 / 18.2 s on a loaded machine)."""
    movies = client_for(cluster, MASTER_KEY).index("movies")
    tasks = [
        movies.update_searchable_attributes(SEARCHABLE).task_uid,
        movies.update_filterable_attributes(["genres", "director"]).task_uid,
        movies.add_documents(MOVIES, primary_key="id").task_uid,
        client_for(cluster, MASTER_KEY).index("books").add_documents(BOOKS, primary_key="id").task_uid,
    ]
    for uid in tasks:
        assert wait_task(cluster, uid, timeout=120, key=MASTER_KEY)["status"] == "succeeded"


def api_search(cluster: RunningCluster, **body: Any) -> dict[str, Any]:
    """What the API itself answers for the movies, to compare the pages with."""
    result: dict[str, Any] = client_for(cluster, MASTER_KEY).index("movies").search(body.pop("q", ""), body)
    return result


def total(cluster: RunningCluster, **body: Any) -> int:
    """How many movies the API finds for this search."""
    return int(api_search(cluster, limit=0, **body)["estimatedTotalHits"])


def default_key(cluster: RunningCluster, name: str) -> str:
    """The key of one of the keys every instance with a master key starts with (``Default ... API Key``)."""
    keys = client_for(cluster, MASTER_KEY).get_keys({"limit": 100}).results
    return str(next(key.key for key in keys if key.name == name))


def screenshot(page: Page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def requests_of(page: Page) -> list[Request]:
    """Every request the page sends from now on."""
    seen: list[Request] = []

    def keep(request: Request) -> None:
        seen.append(request)

    page.on("request", keep)
    return seen


def tab_to(page: Page, selector: str, limit: int = 60) -> None:
    """Press Tab (nothing else) until the element ``selector`` names has the focus."""
    target = page.locator(selector)
    for _ in range(limit):
        page.keyboard.press("Tab")
        if target.evaluate("node => node === document.activeElement"):
            return
    raise AssertionError(f"{selector} never got the focus in {limit} presses of Tab")


@functools.cache
def built_example() -> Path:
    """``deploy/instantsearch`` with ``dist/app.js`` bundled (``make instantsearch``: npm ci, then
    esbuild). Make skips the build when the bundle is newer than the lock file and the sources; the
    lock keeps two pytest workers from running npm in the same folder at once."""
    with open(REPO_ROOT / "deploy" / "instantsearch" / "package.json", "rb") as anchor:
        fcntl.flock(anchor, fcntl.LOCK_EX)
        subprocess.run(["make", "-s", "-C", str(REPO_ROOT), "instantsearch"], check=True, timeout=600)
    return EXAMPLE


@contextmanager
def served_example(folder: Path, host: str, api_key: str) -> Iterator[str]:
    """The example's files copied into ``folder`` with a ``config.js`` naming ``host`` and ``api_key``,
    served on a loopback port: another origin than Sift's, as a real front-end is."""
    example = built_example()
    for name in ("index.html", "style.css"):
        shutil.copy(example / name, folder / name)
    shutil.copytree(example / "dist", folder / "dist", dirs_exist_ok=True)
    settings = json.dumps({"host": host, "apiKey": api_key, "indexUid": "movies"})
    (folder / "config.js").write_text(f"window.SIFT_SEARCH = {settings};\n")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
