"""Browser tests: Playwright for Python driving Debian's Chromium (``/usr/bin/chromium``), never a
browser of Playwright's own. ``make test`` installs Chromium; where it is absent they are skipped.

One cluster (per pytest worker) serves every browser test: in development, so it serves the preview
page, and with a master key, so the pages' API keys are exercised too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.browser.support import KEY_ITEM, fill
from tests.support.auth import MASTER_KEY, secured_cluster
from tests.support.cluster import RunningCluster

CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium keeps dialling out, and a closed network refuses it.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 20_000
"""How long a step may wait for the page: generous, the suite shares two cores."""

expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    """Package-scoped: Playwright's sync API keeps an event loop running in the main thread while it is
    open, and the tests of other packages that run after these in the same worker call asyncio.run()."""
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: `make test` installs Debian's package `chromium`")
    with sync_playwright() as playwright:
        # Playwright gives each launch a fresh, temporary profile.
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="package")
def site(browser: Browser) -> Iterator[RunningCluster]:
    """``browser`` first: without Chromium the tests skip before a cluster is started for nothing."""
    with secured_cluster("--env", "development", shards=2) as cluster:
        fill(cluster)
        yield cluster


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh profile per test: its own local storage."""
    opened = browser.new_context(viewport={"width": 1280, "height": 900})
    opened.set_default_timeout(TIMEOUT_MS)
    yield opened
    opened.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    """A tab whose uncaught script errors fail the test."""
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    assert not errors, errors


@pytest.fixture
def signed_in(page: Page) -> Page:
    """``page`` in a profile where the master key was entered on the preview page before."""
    page.add_init_script(f"localStorage.setItem({json.dumps(KEY_ITEM)}, {json.dumps(MASTER_KEY)})")
    return page
