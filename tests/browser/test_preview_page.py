"""The search preview page (``GET /`` in a browser, ``--env development``): index picker, hits as you
type with highlights, facets, processing time, pagination, keyboard-only use and phone width; and
production, which serves no page."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import Browser, Locator, Page, expect

from tests.browser.support import KEY_ITEM, MOVIES, api_search, requests_of, screenshot, tab_to, total
from tests.support.auth import MASTER_KEY, secured_cluster
from tests.support.cluster import RunningCluster

BROWSER_ACCEPT = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
PAGES = -(-len(MOVIES) // 10)


def open_movies(page: Page, site: RunningCluster) -> None:
    page.goto(site.url)
    page.select_option("#index-select", "movies")
    expect(page.locator("#stats")).to_have_text(re.compile(rf"^{len(MOVIES):,} results in \d+ ms$"))


def shows_total(page: Page, count: int) -> None:
    noun = "result" if count == 1 else "results"
    expect(page.locator("#stats")).to_have_text(re.compile(rf"^{count:,} {noun} in \d+ ms$"))


def facet_value(page: Page, value: str) -> tuple[int, Locator]:
    """The count beside ``value`` and its label, whose checkbox ticks it."""
    label = page.locator(
        ".facet label", has=page.locator(".value", has_text=re.compile(f"^{re.escape(value)}$"))
    )
    return int(label.locator(".count").inner_text().replace(",", "")), label


def test_a_browser_gets_the_page_and_other_clients_the_status(site: RunningCluster) -> None:
    page = httpx.get(site.url, headers=BROWSER_ACCEPT)
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert '<script src="/preview/preview.js"' in page.text
    assert httpx.get(site.url).json() == {"status": "Sift is running"}
    assert httpx.get(f"{site.url}/preview/preview.css").headers["content-type"] == "text/css; charset=utf-8"
    assert (
        httpx.get(f"{site.url}/preview/other.js").status_code,
        httpx.get(f"{site.url}/x").status_code,
    ) == (
        404,
        404,
    )


def test_production_serves_no_page(page: Page) -> None:
    with secured_cluster("--env", "production", shards=1) as production:
        root = httpx.get(production.url, headers=BROWSER_ACCEPT)
        assert (root.status_code, root.headers["content-type"]) == (200, "application/json")
        assert root.json() == {"status": "Sift is running"}
        for asset in ("preview.js", "preview.css"):
            missing = httpx.get(f"{production.url}/preview/{asset}")
            assert (missing.status_code, missing.content) == (404, b"")
        page.goto(production.url)
        expect(page.locator("body")).to_have_text('{"status":"Sift is running"}')
        expect(page.locator("#q")).to_have_count(0)


def test_index_picker_lists_every_index_and_searches_the_one_picked(
    site: RunningCluster, signed_in: Page
) -> None:
    page = signed_in
    page.goto(site.url)
    expect(page.locator("#index-select option")).to_have_text(["books", "movies"])
    page.select_option("#index-select", "movies")
    shows_total(page, len(MOVIES))
    expect(page.locator(".hit")).to_have_count(10)
    page.select_option("#index-select", "books")
    shows_total(page, 3)
    # A document's markup is text on the page: no element was made from it.
    expect(page.locator(".hit h2", has_text="<img src=x id=injected> Markup")).to_have_count(1)
    expect(page.locator("#injected")).to_have_count(0)
    # The picker's choice is remembered, as the key is; the key field stays, to change or forget it.
    page.reload()
    expect(page.locator("#index-select")).to_have_value("books")
    expect(page.locator("#key-form")).to_be_visible()
    assert page.evaluate(f"localStorage.getItem('{KEY_ITEM}')") == MASTER_KEY


def test_hits_follow_the_typing_and_a_typo_finds_the_right_first_hit(
    site: RunningCluster, signed_in: Page
) -> None:
    page = signed_in
    open_movies(page, site)
    searches = requests_of(page)
    page.locator("#q").press_sequentially("intersteller", delay=40)
    first = page.locator(".hit").first
    expect(first.locator("h2")).to_have_text("Interstellar")
    expect(first.locator("h2 mark")).to_have_text("Interstellar")
    expected = api_search(site, q="intersteller", limit=10, attributesToRetrieve=["title"])
    expect(page.locator(".hit h2")).to_have_text([hit["title"] for hit in expected["hits"]])
    shows_total(page, expected["estimatedTotalHits"])
    typed = [request for request in searches if request.url.endswith("/multi-search")]
    assert len(typed) > 1, "hits follow the typing: a search per keystroke, not one at the end"
    screenshot(page, "preview")


def test_ticking_facets_changes_the_count(site: RunningCluster, signed_in: Page) -> None:
    page = signed_in
    open_movies(page, site)
    page.locator("#q").fill("space")
    before = total(site, q="space")
    shows_total(page, before)

    drama_count, drama = facet_value(page, "Drama")
    assert drama_count == total(site, q="space", filter='genres = "Drama"') < before
    drama.locator("input").check()
    shows_total(page, drama_count)
    # A second value of the same facet widens the results (values of one attribute are alternatives),
    # whose counts stay those of each value alone (counted without the attribute's own filter).
    comedy_count, comedy = facet_value(page, "Comedy")
    assert comedy_count == total(site, q="space", filter='genres = "Comedy"')
    comedy.locator("input").check()
    both = total(site, q="space", filter=[['genres = "Drama"', 'genres = "Comedy"']])
    shows_total(page, both)
    assert both > drama_count
    # Another attribute narrows them: its count is the count of the results it leaves.
    directors = page.locator("details.facet", has=page.locator("summary", has_text="director"))
    name = directors.locator(".value").first.inner_text()
    director_count, director = facet_value(page, name)
    director.locator("input").check()
    shows_total(page, director_count)
    genres = ['genres = "Drama"', 'genres = "Comedy"']
    assert director_count == total(site, q="space", filter=[genres, f'director = "{name}"']) < both

    # Each step waits for its results: a click while the facets are redrawn could land on another box.
    for label, left in ((director, both), (comedy, drama_count), (drama, before)):
        label.locator("input").uncheck()
        shows_total(page, left)


def test_pagination_pages_forward_and_back(site: RunningCluster, signed_in: Page) -> None:
    page = signed_in
    open_movies(page, site)
    expect(page.locator("#page-info")).to_have_text(f"Page 1 of {PAGES}")
    expect(page.locator("#previous-page")).to_be_disabled()
    page.click("#next-page")
    expect(page.locator("#page-info")).to_have_text(f"Page 2 of {PAGES}")
    second = api_search(site, page=2, hitsPerPage=10, attributesToRetrieve=["title"])
    expect(page.locator(".hit h2")).to_have_text([hit["title"] for hit in second["hits"]])
    page.click("#previous-page")
    expect(page.locator("#page-info")).to_have_text(f"Page 1 of {PAGES}")
    expect(page.locator("#previous-page")).to_be_disabled()


def test_keyboard_alone_picks_searches_filters_and_pages(site: RunningCluster, signed_in: Page) -> None:
    page = signed_in
    page.goto(site.url)
    shows_total(page, 3)  # the first index, books
    tab_to(page, "#index-select")
    page.keyboard.type("m")  # type-ahead in the focused picker
    shows_total(page, len(MOVIES))
    tab_to(page, "#q")
    page.keyboard.type("space")
    shows_total(page, total(site, q="space"))
    tab_to(page, ".facet input[type=checkbox] >> nth=0")
    box = page.locator(".facet input[type=checkbox]").first
    attribute, value = box.get_attribute("data-attribute"), box.get_attribute("data-value")
    page.keyboard.press("Space")
    shows_total(page, total(site, q="space", filter=f'{attribute} = "{value}"'))
    # The facets were drawn again with the new counts; the focus stayed on the box just ticked.
    focused = page.locator(".facet input:focus")
    expect(focused).to_be_checked()
    assert [focused.get_attribute("data-attribute"), focused.get_attribute("data-value")] == [
        attribute,
        value,
    ]
    page.keyboard.press("Space")
    shows_total(page, total(site, q="space"))
    tab_to(page, "#next-page")
    page.keyboard.press("Enter")
    expect(page.locator("#page-info")).to_have_text(re.compile(r"^Page 2 of "))
    page.keyboard.press("Shift+Tab")
    expect(page.locator("#previous-page")).to_be_focused()
    # "/" from anywhere but a field returns to the search box.
    page.keyboard.press("/")
    expect(page.locator("#q")).to_be_focused()


def test_phone_width_has_one_column_and_no_sideways_scroll(browser: Browser, site: RunningCluster) -> None:
    phone = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    try:
        page = phone.new_page()
        page.add_init_script(f"localStorage.setItem('{KEY_ITEM}', '{MASTER_KEY}')")
        open_movies(page, site)
        page.locator("#q").fill("intersteller")
        expect(page.locator(".hit h2").first).to_have_text("Interstellar")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        facets, hits = page.locator("#facets").bounding_box(), page.locator("#hits").bounding_box()
        assert facets is not None and hits is not None
        assert facets["y"] + facets["height"] <= hits["y"], "filters stack above the results"
        assert hits["width"] > 300
        # Facets start folded on a phone; a tap unfolds one and ticks a value.
        genres = page.locator("details.facet", has=page.locator("summary", has_text="genres"))
        expect(genres).not_to_have_attribute("open", "")
        genres.locator("summary").tap()
        genres.locator("label", has=page.locator(".value", has_text=re.compile("^Drama$"))).tap()
        shows_total(page, total(site, q="intersteller", filter='genres = "Drama"'))
        screenshot(page, "preview-phone")
    finally:
        phone.close()
