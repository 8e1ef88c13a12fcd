"""An agent drives the inventory view end to end: a real server, the official MCP client over HTTP, Chromium.

The server, the agent's session and its tab are shared (see conftest); each test first reads what it changes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp import Client
from playwright.async_api import Browser, Page, expect

from tests.support.e2e import RunningServer
from tests.views.inventory.support import (
    OpenView,
    call,
    data_of,
    held_client,
    on_hand_cell,
    open_view,
    snapshot,
    stock_row,
    structured,
    texts,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the shared agent and tab live in the session loop


def _shown(value: int) -> str:
    return f"{value:,}"


async def test_the_opened_view_shows_its_warehouse_every_row_and_that_an_agent_drives_it(
    view: OpenView, tab: Page, db: Path
) -> None:
    before = snapshot(db)
    await expect(tab.get_by_test_id("warehouse-code")).to_have_text("BER")
    await expect(tab.get_by_test_id("status")).to_contain_text("Driven by an agent")
    # the dot's pulse ends: a tab that animates forever composes a frame every vsync while nothing changes
    endless = "document.getAnimations().filter((a) => a.effect.getComputedTiming().iterations === Infinity).length"
    assert await tab.evaluate(endless) == 0
    await expect(tab.get_by_test_id("row-count")).to_have_text("60 items shown")
    for sku in ("FST-1001", "PWR-3001", "CLN-8007"):
        await expect(on_hand_cell(tab, sku)).to_have_text(_shown(before.on_hand(sku)))
    assert view.url.startswith("http://127.0.0.1:") and "/inventory?key=" in view.url
    await expect(tab.get_by_test_id("viewer-link")).to_have_attribute("href", f"/viewer?view={view.handle[:6]}")


async def test_an_update_filters_the_table_and_answers_with_exactly_the_rows_shown(
    view: OpenView, agent: Client, tab: Page
) -> None:
    result = await call(agent, "inventory_update", search="hex")
    rows = data_of(result)
    assert [row["sku"] for row in rows] == ["FST-1001", "FST-1002", "TLS-2008"]
    assert "- The view now shows 3 item(s) of warehouse BER; the user sees the same rows." in texts(result)[-3]
    await expect(tab.get_by_test_id("row-count")).to_have_text("3 items shown")
    await expect(tab.get_by_test_id("filter-search")).to_have_value("hex")

    low = data_of(await call(agent, "inventory_update", search=None, low_stock_only=True))
    assert low and all(row["available"] < row["reorder_point"] for row in low)
    await expect(tab.get_by_test_id("row-count")).to_have_text(f"{len(low)} item{'s' if len(low) > 1 else ''} shown")
    first = low[0]  # its available figure is a badge that says why it is marked
    badge = stock_row(tab, first["sku"]).get_by_title(f"Below the reorder point of {first['reorder_point']}")
    await expect(badge).to_have_text(f"{first['available']:,}")

    safety = data_of(await call(agent, "inventory_update", low_stock_only=False, category="safety"))
    assert {row["category"] for row in safety} == {"Safety"}
    await expect(tab.get_by_test_id("filter-category")).to_contain_text("Safety")
    await expect(tab.get_by_test_id("row-count")).to_have_text(f"{len(safety)} items shown")

    await call(agent, "inventory_update", category=None)
    await expect(tab.get_by_test_id("row-count")).to_have_text("60 items shown")


async def test_switching_the_warehouse_shows_its_stock(view: OpenView, agent: Client, tab: Page, db: Path) -> None:
    rows = data_of(await call(agent, "inventory_update", warehouse_code="ham"))
    carried = sum(1 for warehouse, _ in snapshot(db).stock if warehouse == "HAM")
    assert len(rows) == min(carried, 50)  # the answer is cut at 50 rows; the page shows them all
    await expect(tab.get_by_test_id("warehouse-code")).to_have_text("HAM")
    await expect(tab.get_by_test_id("row-count")).to_have_text(f"{carried} items shown")
    first = rows[0]["sku"]
    await expect(on_hand_cell(tab, first)).to_have_text(_shown(snapshot(db).on_hand(first, "HAM")))
    await call(agent, "inventory_update", warehouse_code="BER")
    await expect(tab.get_by_test_id("warehouse-code")).to_have_text("BER")


async def test_an_adjustment_by_the_agent_changes_the_row_and_leads_the_movement_feed(
    view: OpenView, agent: Client, tab: Page, db: Path
) -> None:
    before = snapshot(db)
    result = await call(agent, "inventory_adjust_stock", sku="fst-1002", delta=5, reason="Goods receipt PO-1")
    item = data_of(result)
    assert item["sku"] == "FST-1002" and item["on_hand"] == before.on_hand("FST-1002") + 5
    assert item["supplier_email"] == "[REDACTED]"
    after = snapshot(db)
    assert after.movements == before.movements + 1
    await expect(on_hand_cell(tab, "FST-1002")).to_have_text(_shown(item["on_hand"]))
    latest = tab.get_by_test_id("movement-feed").locator("[data-actor]").first
    await expect(latest).to_have_attribute("data-actor", "agent")
    await expect(latest).to_contain_text("FST-1002")
    await expect(latest).to_contain_text("Goods receipt PO-1")


async def test_a_reason_with_markup_shows_in_the_feed_as_text_and_runs_nothing(
    view: OpenView, agent: Client, tab: Page
) -> None:
    reason = '<img src=x onerror="window.feedInjected=1"><b>bold</b>'
    for delta in (1, -1):
        result = await call(agent, "inventory_adjust_stock", sku="FST-1002", delta=delta, reason=reason)
        assert not result.is_error, texts(result)
    latest = tab.get_by_test_id("movement-feed").locator("[data-actor]").first
    await expect(latest).to_contain_text(reason)
    assert await latest.locator("img, b").count() == 0
    assert await tab.evaluate("window.feedInjected") is None


async def test_a_table_sorted_by_on_hand_moves_an_adjusted_row_where_its_new_figure_belongs(
    server: RunningServer, browser: Browser
) -> None:
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        page = await context.new_page()
        async with held_client(server.mcp_url) as agent:
            opened = await open_view(agent, page, warehouse_code="BER")
            table = page.get_by_test_id("stock-table")
            await table.locator("th", has_text="On hand").click()  # ascending
            rows = table.locator("tbody.q-virtual-scroll__content tr")  # not the virtual scroll's padding rows
            first_sku = rows.first.locator("td").first
            lowest = (await first_sku.inner_text()).strip()
            arguments = {"_view": opened.handle, "sku": lowest, "reason": "Count"}
            result = await agent.call_tool("inventory_adjust_stock", arguments | {"delta": 5000})
            assert not result.is_error, texts(result)
            try:
                await expect(first_sku).not_to_have_text(lowest)
                await expect(rows.last.locator("td").first).to_have_text(lowest)
            finally:
                assert not (await agent.call_tool("inventory_adjust_stock", arguments | {"delta": -5000})).is_error
    finally:
        await context.close()


async def test_a_transfer_moves_units_between_warehouses_and_the_page_follows(
    view: OpenView, agent: Client, tab: Page, db: Path
) -> None:
    before = snapshot(db)
    moved = structured(
        await call(
            agent, "inventory_transfer_stock", sku="FST-1003", from_warehouse="BER", to_warehouse="HAM", quantity=2
        )
    )
    assert moved == {
        "sku": "FST-1003",
        "from_warehouse": "BER",
        "to_warehouse": "HAM",
        "quantity": 2,
        "from_on_hand": before.on_hand("FST-1003") - 2,
        "to_on_hand": before.on_hand("FST-1003", "HAM") + 2,
    }
    assert snapshot(db).movements == before.movements + 2
    await expect(on_hand_cell(tab, "FST-1003")).to_have_text(_shown(moved["from_on_hand"]))


async def test_a_retried_call_with_the_same_call_id_books_its_change_once(
    view: OpenView, agent: Client, tab: Page, db: Path
) -> None:
    before = snapshot(db)
    first = data_of(await call(agent, "inventory_adjust_stock", sku="FST-1004", delta=3, reason="PO-7", _call_id="a-1"))
    again = data_of(await call(agent, "inventory_adjust_stock", sku="FST-1004", delta=3, reason="PO-7", _call_id="a-1"))
    assert first["on_hand"] == again["on_hand"] == before.on_hand("FST-1004") + 3
    move = {"sku": "FST-1004", "from_warehouse": "BER", "to_warehouse": "MUC", "quantity": 1, "_call_id": "t-1"}
    moved, repeated = [structured(await call(agent, "inventory_transfer_stock", **move)) for _ in range(2)]
    assert moved == repeated and moved["from_on_hand"] == before.on_hand("FST-1004") + 2
    after = snapshot(db)
    assert after.movements == before.movements + 3
    assert after.on_hand("FST-1004") == before.on_hand("FST-1004") + 2
    await expect(on_hand_cell(tab, "FST-1004")).to_have_text(_shown(after.on_hand("FST-1004")))
    other = await call(agent, "inventory_adjust_stock", sku="FST-1004", delta=4, reason="PO-8", _call_id="a-1")
    assert other.is_error and "a-1" in texts(other)[0] and snapshot(db).movements == after.movements
    too_long = await call(agent, "inventory_adjust_stock", sku="FST-1004", delta=1, reason="PO-9", _call_id="x" * 65)
    assert too_long.is_error and "_call_id" in texts(too_long)[0] and snapshot(db).movements == after.movements


async def test_selecting_an_item_highlights_it_and_answers_with_its_history(
    view: OpenView, agent: Client, tab: Page
) -> None:
    result = await call(agent, "inventory_select_item", sku="TLS-2002")
    blocks = texts(result)
    assert data_of(result)["sku"] == "TLS-2002"
    assert any(b.startswith('<ui_passthrough type="echarts" title="Stock history of TLS-2002"') for b in blocks)
    assert any(b.startswith('<ui_passthrough type="markdown" title="Last movements of TLS-2002">') for b in blocks)
    await expect(stock_row(tab, "TLS-2002")).to_have_class(re.compile(r"\brow-selected\b"))
    await expect(tab.get_by_test_id("item-panel")).to_contain_text("Screwdriver set, 8-piece")
    await expect(tab.get_by_test_id("stock-chart").locator("xpath=..")).to_contain_text("History of TLS-2002")


async def test_a_report_and_a_refresh_agree_with_the_kpi_cards(view: OpenView, agent: Client, tab: Page) -> None:
    groups = data_of(await call(agent, "inventory_stock_report", group_by="warehouse"))
    assert [g["group"] for g in groups] == ["BER", "HAM", "MUC"]
    by_category = await call(agent, "inventory_stock_report")
    assert any('title="Stock totals per group"' in block for block in texts(by_category))
    totals = structured(await call(agent, "inventory_refresh_stock"))
    assert totals["warehouse"] == "BER" and totals["refreshed"] is True
    assert totals["units_on_hand"] == next(g["units_on_hand"] for g in groups if g["group"] == "BER")
    await expect(tab.get_by_test_id("kpi-items")).to_contain_text(_shown(totals["items"]))
    await expect(tab.get_by_test_id("kpi-units")).to_contain_text(_shown(totals["units_on_hand"]))
    await expect(tab.get_by_test_id("kpi-low")).to_contain_text(_shown(totals["low_stock"]))


async def test_select_trims_an_action_answer_to_the_fields_asked_for(view: OpenView, agent: Client) -> None:
    result = await call(agent, "inventory_select_item", sku="FST-1001", _select=["sku", "on_hand"])
    assert list(data_of(result)) == ["sku", "on_hand"]


async def test_the_export_lists_every_row_of_the_warehouse_as_toon(view: OpenView, agent: Client) -> None:
    result = await call(agent, "inventory_export_stock")
    text = texts(result)[0]
    assert text.startswith("[60|]{sku|name|category|unit|on_hand|reserved|available|reorder_point|unit_cost_cents|")
    assert "supplier_cost_cents" not in text and "@" not in text


async def test_a_persons_adjustment_in_the_page_is_seen_by_the_agents_next_call(
    view: OpenView, agent: Client, tab: Page, db: Path
) -> None:
    before = snapshot(db).on_hand("PKG-6002")
    await stock_row(tab, "PKG-6002").locator("td").first.click()
    panel = tab.get_by_test_id("item-panel")
    await expect(panel).to_contain_text("PKG-6002")
    await tab.get_by_test_id("adjust-delta").fill("-4")
    await tab.get_by_test_id("adjust-reason").fill("Packed order SO-777")
    await tab.get_by_test_id("adjust-apply").click()
    await expect(on_hand_cell(tab, "PKG-6002")).to_have_text(_shown(before - 4))

    result = await call(agent, "inventory_select_item", sku="PKG-6002")
    assert data_of(result)["on_hand"] == before - 4
    history = next(b for b in texts(result) if 'title="Last movements of PKG-6002"' in b)
    assert "| -4 | " + str(before - 4) + " | person | Packed order SO-777 |" in history


async def test_another_open_view_follows_the_agents_changes_live(
    view: OpenView, agent: Client, server: RunningServer, browser: Browser, db: Path
) -> None:
    context = await browser.new_context()
    try:
        other = await context.new_page()
        await other.goto(server.base_url + "/inventory")
        before = snapshot(db).on_hand("FST-1005")
        await expect(on_hand_cell(other, "FST-1005")).to_have_text(_shown(before))
        await call(agent, "inventory_adjust_stock", sku="FST-1005", delta=11, reason="Goods receipt PO-2")
        await expect(on_hand_cell(other, "FST-1005")).to_have_text(_shown(before + 11))
        latest = other.get_by_test_id("movement-feed").locator("[data-actor]").first
        await expect(latest).to_contain_text("Goods receipt PO-2")
    finally:
        await context.close()


async def test_a_view_opened_with_a_search_that_matches_nothing_says_so(
    server: RunningServer, browser: Browser
) -> None:
    context = await browser.new_context()
    try:
        page = await context.new_page()
        async with Client(server.mcp_url, mode="legacy") as newcomer:
            await open_view(newcomer, page, search="no item has this name")
            await expect(page.get_by_test_id("row-count")).to_have_text("0 items shown")
            await expect(page.get_by_text("No item matches the filters.")).to_be_visible()
            await call(newcomer, "inventory_update", search="hex")
            await expect(page.get_by_test_id("row-count")).to_have_text("3 items shown")
            await expect(page.get_by_text("No item matches the filters.")).to_be_hidden()
    finally:
        await context.close()


async def test_a_view_a_person_opened_waits_for_an_agent_until_one_picks_it_up(
    server: RunningServer, browser: Browser
) -> None:
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(server.base_url + "/inventory")
        await expect(page.get_by_test_id("status")).to_contain_text("Waiting for an agent")
        await expect(page.get_by_test_id("warehouse-code")).to_have_text("BER")
        async with Client(server.mcp_url, mode="legacy") as newcomer:
            opened = structured(await newcomer.call_tool("inventory", {"warehouse_code": "MUC"}))
            assert opened["reused"] is True and opened["state"] == "live"
            await expect(page.get_by_test_id("warehouse-code")).to_have_text("MUC")
            await expect(page.get_by_test_id("status")).to_contain_text("Driven by an agent")
    finally:
        await context.close()
