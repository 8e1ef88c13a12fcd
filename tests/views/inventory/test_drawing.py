"""The pages draw with the prebuilt stylesheet instead of Tailwind's in-browser compiler (what a watching tab spends
per change is a figure of `bench.inventory`)."""

from __future__ import annotations

import pytest
from playwright.async_api import Page

from tests.views.inventory.support import OpenView

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_pages_use_the_prebuilt_stylesheet_without_tailwinds_compiler(view: OpenView, tab: Page) -> None:
    sheets = await tab.evaluate("[...document.styleSheets].map((sheet) => sheet.href || '')")
    assert any("/_webapp/pages-" in href for href in sheets), sheets
    assert await tab.locator("script[src*=tailwindcss]").count() == 0
    count = tab.get_by_test_id("row-count")  # `text-xs text-gray-500`: Tailwind classes from the prebuilt sheet
    assert await count.evaluate("(element) => getComputedStyle(element).fontSize") == "12px"


async def test_the_stylesheet_is_cached_for_good_and_follows_the_url_prefix(view: OpenView, tab: Page) -> None:
    href = await tab.evaluate("document.querySelector('link[data-webapp-styles]').href")
    response = await tab.request.get(href)
    assert response.ok and response.headers["content-type"].startswith("text/css")
    assert "immutable" in response.headers["cache-control"]
    page = await tab.request.get(view.url, headers={"X-Forwarded-Prefix": "/views"})
    html = await page.text()
    assert '"/views/_nicegui/' in html  # the import map the link's script reads its prefix from
    assert "_webapp/pages-" in html
