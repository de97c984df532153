"""The preview page on an instance with a master key: it asks for an API key, keeps it in the
browser's local storage and sends it as a header, never in a URL. Without a master key it asks for none."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.support import KEY_ITEM, MOVIES, default_key, requests_of
from tests.support.auth import MASTER_KEY
from tests.support.cluster import RunningCluster


def test_a_search_key_typed_in_is_kept_in_local_storage_and_never_in_a_url(
    site: RunningCluster, page: Page
) -> None:
    search_key = default_key(site, "Default Search API Key")
    sent = requests_of(page)
    page.goto(site.url)
    expect(page.locator("#notice")).to_have_text(re.compile("protected by a master key"))
    expect(page.locator("#api-key")).to_be_focused()
    expect(page.locator("#stats")).to_have_text("")

    page.keyboard.type(search_key)
    page.keyboard.press("Enter")
    # A search key may not list the indexes: the picker becomes a field for the index's uid.
    expect(page.locator("#notice")).to_have_text(re.compile("cannot list the indexes"))
    page.locator("#index-uid").fill("movies")
    page.locator("#index-uid").press("Enter")
    expect(page.locator("#stats")).to_have_text(re.compile(rf"^{len(MOVIES):,} results in \d+ ms$"))
    page.locator("#q").fill("intersteller")
    expect(page.locator(".hit h2").first).to_have_text("Interstellar")
    expect(page.locator(".hit h2 mark").first).to_have_text("Interstellar")

    assert page.evaluate(f"localStorage.getItem('{KEY_ITEM}')") == search_key
    # Reloaded, the page searches with the stored key, without asking again.
    page.reload()
    expect(page.locator("#stats")).to_have_text(re.compile(rf"^{len(MOVIES):,} results in \d+ ms$"))
    expect(page.locator("#index-uid")).to_have_value("movies")

    searches = [request for request in sent if request.url.endswith("/multi-search")]
    assert searches
    assert all(request.headers.get("authorization") == f"Bearer {search_key}" for request in searches)
    for request in sent:
        assert search_key not in request.url
        assert search_key not in (request.post_data or "")
    assert search_key not in page.url


def test_a_wrong_key_is_refused_and_forgetting_the_key_asks_again(site: RunningCluster, page: Page) -> None:
    page.goto(f"{site.url}/")
    expect(page.locator("#key-form")).to_be_visible()
    page.locator("#api-key").fill("not-a-key")
    page.locator("#key-form button[type=submit]").click()
    page.locator("#index-uid").fill("movies")
    page.locator("#index-uid").press("Enter")
    expect(page.locator("#notice")).to_have_text("The provided API key is invalid.")
    expect(page.locator(".hit")).to_have_count(0)

    # The default admin key may list the indexes: the picker is back.
    page.locator("#api-key").fill(default_key(site, "Default Admin API Key"))
    page.locator("#key-form button[type=submit]").click()
    expect(page.locator("#index-select option")).to_have_text(["books", "movies"])
    # The index typed before is remembered.
    expect(page.locator("#index-select")).to_have_value("movies")
    expect(page.locator("#stats")).to_have_text(re.compile(rf"^{len(MOVIES):,} results"))

    page.locator("#forget-key").click()
    expect(page.locator("#notice")).to_have_text(re.compile("protected by a master key"))
    assert page.evaluate(f"localStorage.getItem('{KEY_ITEM}')") is None
    expect(page.locator(".hit")).to_have_count(0)
    assert MASTER_KEY not in page.url


def test_without_a_master_key_no_key_is_asked(page: Page) -> None:
    with RunningCluster("--env", "development", shards=1) as open_instance:
        page.goto(open_instance.url)
        expect(page.locator("#notice")).to_have_text(re.compile("There is no index yet"))
        expect(page.locator("#key-form")).to_be_hidden()
