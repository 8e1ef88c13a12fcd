"""Open views follow every committed change in Chromium, a change sends a tab what it changed, and a frozen watcher
tab holds up nobody.

Each test opens its own tabs (own browser contexts, so a paused tab shares no renderer with the others).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, WebSocket, WebSocketRoute, expect

from tests.support.cluster import eventually
from tests.support.e2e import RunningServer
from tests.support.ops import scrape
from tests.views.inventory.support import (
    CHART_SHOWS,
    call,
    data_of,
    held_client,
    on_hand_cell,
    open_view,
    snapshot,
    stock_row,
    structured,
    units_per_category,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the browser lives in the session loop

WAIT = 10_000  # ms, for the page to show a change


@asynccontextmanager
async def _tabs(browser: Browser, count: int) -> AsyncGenerator[list[Page]]:
    contexts = [await browser.new_context(viewport={"width": 1440, "height": 1000}) for _ in range(count)]
    try:
        yield [await context.new_page() for context in contexts]
    finally:
        for context in contexts:
            await context.close()


async def _person_view(page: Page, server: RunningServer) -> None:
    """A view a person opens (the default warehouse, BER)."""
    await page.goto(server.base_url + "/inventory")
    await expect(page.get_by_test_id("warehouse-code")).to_have_text("BER")


def _shown(value: int) -> str:
    return f"{value:,}"


def _frame_sizes(page: Page) -> list[int]:
    """The size of every socket frame the page receives from now on."""
    sizes: list[int] = []

    def watch(socket: WebSocket) -> None:
        socket.on("framereceived", lambda payload: sizes.append(len(payload)))

    page.on("websocket", watch)
    return sizes


async def test_a_one_row_change_sends_the_tab_a_quarter_of_a_whole_table_change_at_most(
    server: RunningServer, browser: Browser, db: Path
) -> None:
    async with _tabs(browser, 1) as (page,), held_client(server.mcp_url) as agent:
        sizes = _frame_sizes(page)
        await open_view(agent, page, warehouse_code="BER")
        await call(agent, "inventory_update", search="no-such-item")
        await expect(page.get_by_test_id("row-count")).to_have_text("0 items shown")

        mark = len(sizes)
        await call(agent, "inventory_update", search=None)  # every row comes back: the whole table is sent
        await expect(page.get_by_test_id("row-count")).to_have_text("60 items shown")
        whole = sum(sizes[mark:])

        before = snapshot(db).on_hand("FST-1003")
        mark = len(sizes)
        data_of(await call(agent, "inventory_adjust_stock", sku="FST-1003", delta=2, reason="Cycle count"))
        await expect(on_hand_cell(page, "FST-1003")).to_have_text(_shown(before + 2))
        one_row = sum(sizes[mark:])  # the frames reach this process before the page's text does
        assert 0 < one_row * 4 <= whole, (one_row, whole)


async def test_a_long_reason_in_the_feed_is_cut_before_the_time_at_1440_px(
    server: RunningServer, browser: Browser
) -> None:
    reason = "Picked for workshop job W-61725 with a note that is much longer than the feed is wide"
    async with _tabs(browser, 1) as (page,), held_client(server.mcp_url) as agent:
        await open_view(agent, page, warehouse_code="BER")
        data_of(await call(agent, "inventory_adjust_stock", sku="FST-1004", delta=1, reason=reason))
        row = page.get_by_test_id("movement-feed").locator("[data-actor]").first
        await expect(row.locator(f'[title="{reason}"]')).to_be_visible()
        text, time = row.locator(".truncate"), row.locator(".whitespace-nowrap")
        text_box, time_box = await text.bounding_box(), await time.bounding_box()
        assert text_box is not None and time_box is not None
        assert text_box["x"] + text_box["width"] <= time_box["x"]
        assert await text.evaluate("element => element.scrollWidth > element.clientWidth")  # cut, with an ellipsis


async def test_a_frozen_watcher_tab_holds_up_neither_the_caller_nor_the_other_watchers(
    server: RunningServer, browser: Browser, db: Path
) -> None:
    sku = "CLN-8006"
    async with _tabs(browser, 3) as (acting, frozen, watching), held_client(server.mcp_url) as agent:
        await open_view(agent, acting, warehouse_code="BER")
        await _person_view(frozen, server)
        await _person_view(watching, server)
        before = snapshot(db).on_hand(sku)
        cdp = await frozen.context.new_cdp_session(frozen)
        paused = asyncio.Event()
        cdp.on("Debugger.paused", lambda _event: paused.set())  # pyright: ignore[reportUnknownLambdaType]
        await cdp.send("Debugger.enable")
        await cdp.send("Debugger.pause")  # stops the tab's script at its next statement: the change's first message

        data_of(await call(agent, "inventory_adjust_stock", sku=sku, delta=1, reason="Receipt 1"))
        async with asyncio.timeout(10):
            await paused.wait()
        for number in (2, 3):  # the caller goes on while the watcher is frozen
            data_of(await call(agent, "inventory_adjust_stock", sku=sku, delta=1, reason=f"Receipt {number}"))
        await expect(on_hand_cell(watching, sku)).to_have_text(_shown(before + 3), timeout=WAIT)
        await expect(on_hand_cell(acting, sku)).to_have_text(_shown(before + 3))

        await cdp.send("Debugger.resume")
        await expect(on_hand_cell(frozen, sku)).to_have_text(_shown(before + 3), timeout=WAIT)


class _LossyLink:
    """The page's socket through a route that can lose what the server sends (a connection that died on the way
    while the server still wrote to it), and drop the socket so that the page connects again."""

    def __init__(self) -> None:
        self.losing = False
        self._routes: list[tuple[WebSocketRoute, WebSocketRoute]] = []

    def route(self, page_side: WebSocketRoute) -> None:
        server_side = page_side.connect_to_server()
        server_side.on_message(lambda message: None if self.losing else page_side.send(message))
        self._routes.append((page_side, server_side))

    async def drop(self) -> None:
        page_side, server_side = self._routes[-1]
        await server_side.close()
        await page_side.close()


async def test_a_tab_that_lost_messages_on_the_way_shows_every_change_once_it_is_back(
    server: RunningServer, browser: Browser, db: Path
) -> None:
    link = _LossyLink()
    async with _tabs(browser, 2) as (acting, lossy), held_client(server.mcp_url) as agent:
        await open_view(agent, acting, warehouse_code="BER")
        await lossy.context.route_web_socket(re.compile(r"/_nicegui_ws/"), link.route)
        await _person_view(lossy, server)
        first, second = "FST-1003", "PWR-3004"
        before = snapshot(db)
        link.losing = True
        data_of(await call(agent, "inventory_adjust_stock", sku=first, delta=5, reason="Receipt lost 1"))
        data_of(await call(agent, "inventory_adjust_stock", sku=second, delta=6, reason="Receipt lost 2"))
        await expect(on_hand_cell(acting, second)).to_have_text(_shown(before.on_hand(second) + 6))
        await asyncio.sleep(0.3)  # the watching view's updates went out, and were lost
        link.losing = False
        await link.drop()  # the page connects again and NiceGUI replays what it missed
        await expect(on_hand_cell(lossy, second)).to_have_text(_shown(before.on_hand(second) + 6), timeout=WAIT)
        await expect(on_hand_cell(lossy, first)).to_have_text(_shown(before.on_hand(first) + 5), timeout=WAIT)
        feed = lossy.get_by_test_id("movement-feed")
        await expect(feed.locator("[data-actor]").first).to_contain_text("Receipt lost 2")
        await expect(feed).to_contain_text("Receipt lost 1")


def _kpi_units(db: Path, warehouse: str) -> str:
    return _shown(sum(on_hand for (code, _sku), (on_hand, _r) in snapshot(db).stock.items() if code == warehouse))


async def test_views_follow_each_others_changes_with_their_own_filters_and_selection(
    server: RunningServer, browser: Browser, db: Path
) -> None:
    sku, other = "TLS-2004", "TLS-2003"
    async with (
        _tabs(browser, 3) as (low_only, person, hamburg),
        held_client(server.mcp_url) as first,
        held_client(server.mcp_url) as second,
    ):
        await open_view(first, low_only, warehouse_code="BER", low_stock_only=True)
        await open_view(second, hamburg, warehouse_code="HAM")
        await _person_view(person, server)
        row: dict[str, Any] = data_of(await call(first, "inventory_select_item", sku=sku))
        await call(second, "inventory_select_item", sku=other)
        assert row["available"] >= row["reorder_point"]
        await expect(stock_row(low_only, sku)).to_have_count(0)  # not low: the filter hides it

        take = row["available"] - row["reorder_point"] + 1  # the agent makes it low: it joins the filtered view
        data_of(await call(first, "inventory_adjust_stock", sku=sku, delta=-take, reason="Picked for W-1"))
        for page in (low_only, person):
            await expect(on_hand_cell(page, sku)).to_have_text(_shown(row["on_hand"] - take), timeout=WAIT)
            await expect(page.get_by_test_id("kpi-units")).to_contain_text(_kpi_units(db, "BER"))
        await expect(low_only.get_by_test_id("item-panel")).to_contain_text(f"{row['on_hand'] - take:,}")

        await stock_row(person, sku).locator("td").first.click()  # the person restocks it in their own tab
        await person.get_by_test_id("adjust-delta").fill(str(take))
        await person.get_by_test_id("adjust-reason").fill("Returned from W-1")
        await person.get_by_test_id("adjust-apply").click()
        await expect(stock_row(low_only, sku)).to_have_count(0, timeout=WAIT)
        latest = low_only.get_by_test_id("movement-feed").locator("[data-actor]").first
        await expect(latest).to_contain_text("Returned from W-1")
        await expect(latest).to_have_attribute("data-actor", "person")

        moved = structured(await call(second, "inventory_transfer_stock", sku=other, from_warehouse="HAM",
                                      to_warehouse="BER", quantity=1))  # fmt: skip
        await expect(on_hand_cell(person, other)).to_have_text(_shown(int(moved["to_on_hand"])), timeout=WAIT)
        await expect(on_hand_cell(hamburg, other)).to_have_text(_shown(int(moved["from_on_hand"])), timeout=WAIT)
        await expect(hamburg.get_by_test_id("kpi-units")).to_contain_text(_kpi_units(db, "HAM"))
        await expect(person.get_by_test_id("kpi-units")).to_contain_text(_kpi_units(db, "BER"))

        await person.reload()  # a reload shows the same figures
        await expect(on_hand_cell(person, sku)).to_have_text(_shown(row["on_hand"]))


async def test_a_watching_view_updates_the_totals_of_the_categories_changes_touched_and_keeps_the_others(
    server: RunningServer, browser: Browser
) -> None:
    async with _tabs(browser, 2) as (acting, watching), held_client(server.mcp_url) as agent:
        await open_view(agent, acting, warehouse_code="BER")
        await _person_view(watching, server)
        before = await units_per_category(agent)
        await watching.wait_for_function(CHART_SHOWS, arg=before, timeout=WAIT)

        data_of(await call(agent, "inventory_adjust_stock", sku="ELE-4003", delta=4, reason="Receipt R-1"))
        data_of(await call(agent, "inventory_adjust_stock", sku="PKG-6004", delta=2, reason="Receipt R-2"))
        after = await units_per_category(agent)
        assert after == before | {"Electrical": before["Electrical"] + 4, "Packaging": before["Packaging"] + 2}
        await watching.wait_for_function(CHART_SHOWS, arg=after, timeout=WAIT)  # drawn at most once a second


async def test_a_closed_tab_leaves_no_subscription_of_its_view_behind(server: RunningServer, browser: Browser) -> None:
    def subscriptions() -> float:
        return scrape(server.base_url + "/metrics").get("webapp_app_event_subscriptions")

    await asyncio.sleep(2.5)  # the views of tabs closed before are gone after the reconnect grace (2 s)
    before = subscriptions()
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(server.base_url + "/inventory")
    await expect(page.get_by_test_id("warehouse-code")).to_have_text("BER")
    # a search no other view has: the view shows a stock of its own, which follows the warehouse's changes and the
    # word that some may have been missed; the view follows the changes itself too (a turn of its own for each)
    await page.get_by_test_id("filter-search").fill("closed-tab search")
    await expect(page.get_by_test_id("row-count")).to_have_text("0 items shown")
    assert subscriptions() == before + 3
    await context.close()
    await eventually(lambda: subscriptions() == before, 10, "the closed view's subscriptions gone")
