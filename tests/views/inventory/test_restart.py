"""A restart keeps every change and every view: the open tab says it is reconnecting, then re-attaches by its URL."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest
from mcp import Client
from playwright.async_api import Browser, expect

from tests.support.e2e import run_server
from tests.views.inventory.support import INVENTORY_APP, data_of, on_hand_cell, open_view, snapshot, stock_row

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the browser lives in the session loop


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_a_restart_keeps_the_data_and_the_open_tab_reattaches_by_its_url(
    browser: Browser, tmp_path: Path
) -> None:
    db, port = tmp_path / "inventory.db", _free_port()
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    tab = await context.new_page()
    try:
        with run_server("--port", str(port), app=INVENTORY_APP, db=db) as first:
            async with Client(first.mcp_url, mode="legacy") as agent:
                view = await open_view(agent, tab, warehouse_code="BER", category="Fasteners")
                item = data_of(
                    await agent.call_tool("inventory_adjust_stock", {"sku": "FST-1004", "delta": 9, "reason": "Found"})
                )
                await agent.call_tool("inventory_select_item", {"sku": "FST-1004"})
                await expect(on_hand_cell(tab, "FST-1004")).to_have_text(f"{item['on_hand']:,}")
        await expect(tab.get_by_test_id("status")).to_contain_text("Reconnecting…")

        with run_server("--port", str(port), app=INVENTORY_APP, db=db) as second:
            await expect(tab.get_by_test_id("status")).to_contain_text("Driven by an agent", timeout=20_000)
            assert tab.url == view.url
            await expect(on_hand_cell(tab, "FST-1004")).to_have_text(f"{item['on_hand']:,}")
            await expect(stock_row(tab, "FST-1004")).to_have_class(re.compile(r"\brow-selected\b"))
            await expect(tab.get_by_test_id("filter-category")).to_contain_text("Fasteners")
            assert snapshot(db).on_hand("FST-1004") == item["on_hand"]

            async with Client(second.mcp_url) as agent:
                again = data_of(
                    await agent.call_tool(
                        "inventory_adjust_stock",
                        {"sku": "FST-1004", "delta": -1, "reason": "Pick", "_view": view.handle},
                    )
                )
            assert again["on_hand"] == item["on_hand"] - 1
            await expect(on_hand_cell(tab, "FST-1004")).to_have_text(f"{again['on_hand']:,}")
    finally:
        await context.close()
