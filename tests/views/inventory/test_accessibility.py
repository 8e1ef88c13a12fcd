"""What assistive technology and motion settings need of the inventory page: its language on `<html>`, and no pulse
when the person asked the browser for reduced motion."""

from __future__ import annotations

from typing import Literal

import pytest
from playwright.async_api import Browser, Page

from tests.views.inventory.support import OpenView

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_the_page_says_its_language(view: OpenView, tab: Page) -> None:
    assert await tab.evaluate("document.documentElement.lang") == "en-US"


@pytest.mark.parametrize(("motion", "animation"), [("reduce", "none"), ("no-preference", "inventory-pulse")])
async def test_the_status_dot_pulses_only_without_reduced_motion(
    view: OpenView, browser: Browser, motion: Literal["reduce", "no-preference"], animation: str
) -> None:
    context = await browser.new_context(reduced_motion=motion)
    try:
        page = await context.new_page()
        await page.goto(view.url)
        dot = page.locator(".inventory-status .when-online .dot.live").first
        assert await dot.evaluate("(element) => getComputedStyle(element).animationName") == animation
    finally:
        await context.close()
