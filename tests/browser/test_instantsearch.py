"""The InstantSearch example (``deploy/instantsearch``: instantsearch.js and the Meilisearch adapter,
from the npm registry) served from another origin, searching the movies of a protected instance with
the search key it is configured with."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.support import (
    MOVIES,
    api_search,
    default_key,
    screenshot,
    served_example,
    total,
)
from tests.support.cluster import RunningCluster

HITS_PER_PAGE = 6  # the example's configure widget


@pytest.fixture(scope="module")
def example(site: RunningCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    search_key = default_key(site, "Default Search API Key")
    with served_example(tmp_path_factory.mktemp("instantsearch"), site.url, search_key) as url:
        yield url


def test_typo_query_finds_the_right_first_hit_with_its_highlight(example: str, page: Page) -> None:
    page.goto(example)
    expect(page.locator(".ais-Hits-item")).to_have_count(HITS_PER_PAGE)
    page.locator(".ais-SearchBox-input").press_sequentially("intersteller", delay=30)
    first = page.locator(".ais-Hits-item").first
    expect(first.locator("h2")).to_have_text("Interstellar")
    expect(first.locator("h2 mark")).to_have_text("Interstellar")
    expect(first.locator("p mark").first).to_have_text(re.compile("^Interstellar$", re.I))
    screenshot(page, "instantsearch")


def test_refinement_changes_the_count(example: str, site: RunningCluster, page: Page) -> None:
    page.goto(example)
    expect(page.locator(".ais-Stats")).to_contain_text(f"{len(MOVIES):,} results")
    drama = page.locator(
        ".ais-RefinementList-item",
        has=page.locator(".ais-RefinementList-labelText", has_text=re.compile("^Drama$")),
    )
    drama_count = int(drama.locator(".ais-RefinementList-count").inner_text().replace(",", ""))
    assert drama_count == total(site, filter='genres = "Drama"')
    drama.locator("input").check()
    expect(page.locator(".ais-Stats")).to_contain_text(f"{drama_count:,} results")
    expect(page.locator(".ais-Hits-item .genres").first).to_contain_text("Drama")


def test_pagination_pages_forward(example: str, site: RunningCluster, page: Page) -> None:
    page.goto(example)
    expect(page.locator(".ais-Pagination-item--selected")).to_have_text("1")
    page.locator(".ais-Pagination-item--nextPage a").click()
    expect(page.locator(".ais-Pagination-item--selected")).to_have_text("2")
    second = api_search(site, page=2, hitsPerPage=HITS_PER_PAGE, attributesToRetrieve=["title"])
    expect(page.locator(".ais-Hits-item h2")).to_have_text([hit["title"] for hit in second["hits"]])


def test_without_its_search_key_the_example_finds_nothing(
    site: RunningCluster, page: Page, tmp_path: Path
) -> None:
    with served_example(tmp_path, site.url, "") as url:
        with page.expect_response(lambda response: response.url.endswith("/multi-search")) as answer:
            page.goto(url)
        assert answer.value.status == 401
        expect(page.locator("#problem")).to_have_text(
            "The Authorization header is missing. It must use the bearer authorization method."
        )
    expect(page.locator(".ais-Hits-item")).to_have_count(0)
