"""What assistive technology and motion settings need of the inventory page: its language on `<html>`, no pulse
when the person asked the browser for reduced motion, and an agent's changes said in a polite live region."""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, Literal

import pytest
from mcp import Client
from playwright.async_api import Browser, Page, expect

from tests.support.e2e import RunningServer
from tests.views.inventory.support import OpenView, call, held_client, open_view, stock_row

SKU = "FST-1002"

pytestmark = pytest.mark.asyncio(loop_scope="session")


@asynccontextmanager
async def _own_view(
    server: RunningServer, browser: Browser, **options: Any
) -> AsyncGenerator[tuple[Client, Page, OpenView]]:
    """A view of its own (the shared one keeps its tab) in a new browser context made with `options`: its agent, its
    page and the view."""
    context = await browser.new_context(**options)
    try:
        page = await context.new_page()
        async with held_client(server.mcp_url) as agent:
            yield agent, page, await open_view(agent, page, warehouse_code="BER")
    finally:
        await context.close()


async def test_the_page_says_its_language(view: OpenView, tab: Page) -> None:
    assert await tab.evaluate("document.documentElement.lang") == "en-US"


@pytest.mark.parametrize(("motion", "animation"), [("reduce", "none"), ("no-preference", "inventory-pulse")])
async def test_the_status_dot_pulses_only_without_reduced_motion(
    server: RunningServer, browser: Browser, motion: Literal["reduce", "no-preference"], animation: str
) -> None:
    async with _own_view(server, browser, reduced_motion=motion) as (_agent, page, _):
        dot = page.locator(".inventory-status .when-online .dot.live").first
        assert await dot.evaluate("(element) => getComputedStyle(element).animationName") == animation


async def test_an_agents_changes_are_said_politely_the_first_in_words_then_summed_up(
    server: RunningServer, browser: Browser
) -> None:
    async with _own_view(server, browser) as (agent, page, opened):
        region = page.get_by_test_id("agent-announcement")
        assert (await region.get_attribute("role"), await region.get_attribute("aria-live")) == ("status", "polite")
        await call(agent, "inventory_adjust_stock", _view=opened.handle, sku=SKU, delta=1, reason="Count")
        await expect(region).to_have_text("The agent changed the view: adjust stock.")
        for _ in range(2):
            await call(agent, "inventory_adjust_stock", _view=opened.handle, sku=SKU, delta=1, reason="Count")
        await expect(region).to_have_text("The agent made 2 more changes.", timeout=5000)
        assert await page.evaluate("document.activeElement === document.body")  # the focus stayed where it was


async def test_a_row_opens_its_item_from_the_keyboard_and_escape_closes_it_back_to_the_row(
    server: RunningServer, browser: Browser
) -> None:
    async with _own_view(server, browser, viewport={"width": 1440, "height": 1000}) as (_agent, page, _):
        row = stock_row(page, SKU)
        await row.focus()  # a row takes the focus (tabindex), as Tab reaches it
        await page.keyboard.press("Enter")
        panel = page.get_by_test_id("item-panel")
        await expect(panel).to_contain_text(SKU)
        await expect(row).to_have_attribute("aria-selected", "true")
        await page.get_by_test_id("adjust-reason").focus()
        await page.keyboard.press("Escape")
        await expect(row).to_have_attribute("aria-selected", "false")
        await expect(row).to_be_focused()
        await row.press("Enter")
        await expect(row).to_have_attribute("aria-selected", "true")
        await row.press("Escape")  # on the row itself too
        await expect(row).to_have_attribute("aria-selected", "false")


async def test_a_persons_adjustment_is_confirmed_politely_not_as_an_alert(
    server: RunningServer, browser: Browser
) -> None:
    async with _own_view(server, browser, viewport={"width": 1440, "height": 1000}) as (_agent, page, _):
        await stock_row(page, SKU).click()
        await page.get_by_test_id("adjust-delta").fill("1")
        await page.get_by_test_id("adjust-reason").fill("Counted")
        await page.get_by_test_id("adjust-apply").click()
        notification = page.locator(".q-notification", has_text=f"{SKU}: stock changed by +1.")
        await expect(notification).to_have_attribute("role", "status")


@pytest.mark.parametrize("width", [320, 375, 500])
async def test_no_kpi_figure_is_cut_on_a_narrow_screen(server: RunningServer, browser: Browser, width: int) -> None:
    async with _own_view(server, browser, viewport={"width": width, "height": 800}) as (_agent, page, _):
        for kpi in ("items", "units", "value", "low"):
            card = page.get_by_test_id(f"kpi-{kpi}")
            cut = await card.evaluate(
                "(card) => [card, ...card.querySelectorAll('*')].some((e) => e.scrollWidth > e.clientWidth + 1)"
                " || card.getBoundingClientRect().right > document.documentElement.clientWidth"
            )
            assert not cut, (kpi, width)


async def test_the_chart_has_a_text_alternative_with_its_figures(view: OpenView, tab: Page) -> None:
    chart = tab.get_by_test_id("stock-chart")  # ECharts labels the element it draws in
    await expect(chart).to_have_attribute("aria-label", re.compile(r"Units on hand.*\d"))
