"""Helpers for the inventory end-to-end tests: the server, opening the view in a tab, reading the page and the DB."""

from __future__ import annotations

import asyncio
import contextlib
import re
import sqlite3
from collections.abc import AsyncGenerator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import mcp_types
from mcp import Client
from playwright.async_api import Locator, Page, expect

__all__ = [
    "CHART_SHOWS",
    "INVENTORY_APP",
    "OpenView",
    "Snapshot",
    "call",
    "data_of",
    "held_client",
    "on_hand_cell",
    "open_view",
    "snapshot",
    "stock_row",
    "structured",
    "texts",
    "units_per_category",
]

INVENTORY_APP = "views.inventory:build"
# For `page.wait_for_function`: true once the tab's chart draws `expected`, the units on hand per category.
CHART_SHOWS = """(expected) => {
  const option = getElement(document.querySelector('[data-testid=stock-chart]').id.slice(1)).chart.getOption();
  const groups = option.yAxis[0].data, units = option.series[0].data;
  return groups.length === Object.keys(expected).length && groups.every((group, n) => expected[group] === units[n]);
}"""


def texts(result: mcp_types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]


def structured(result: mcp_types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, texts(result)
    assert result.structured_content is not None, texts(result)
    return dict(result.structured_content)


def data_of(result: mcp_types.CallToolResult) -> Any:
    """The data block parsed as JSON (results travel over HTTP, so the side door is not there)."""
    import json

    assert not result.is_error, texts(result)
    return json.loads(texts(result)[0])


async def call(client: Client, tool: str, **arguments: Any) -> mcp_types.CallToolResult:
    return await client.call_tool(tool, arguments)


async def units_per_category(client: Client) -> dict[str, int]:
    """The units on hand per category in the warehouse of the client's view, as the store reports them."""
    return {group["group"]: group["units_on_hand"] for group in data_of(await call(client, "inventory_stock_report"))}


@dataclass(frozen=True)
class OpenView:
    handle: str
    url: str


async def open_view(client: Client, page: Page, **arguments: Any) -> OpenView:
    """Call `inventory`, open its URL in `page` and wait until the view shows its warehouse."""
    data = structured(await client.call_tool("inventory", arguments))
    await page.goto(str(data["url"]))
    code = str(arguments.get("warehouse_code", "BER")).upper()
    await expect(page.get_by_test_id("warehouse-code")).to_have_text(code)
    return OpenView(handle=str(data["view"]), url=str(data["url"]))


def stock_row(page: Page, sku: str) -> Locator:
    """The table row of `sku` (its first cell is exactly the sku)."""
    cell = page.locator("td", has_text=re.compile(rf"^\s*{re.escape(sku)}\s*$"))
    return page.get_by_test_id("stock-table").locator("tbody tr", has=cell)


def on_hand_cell(page: Page, sku: str) -> Locator:
    return stock_row(page, sku).locator("td").nth(3)


@dataclass(frozen=True)
class Snapshot:
    """Every stock row and the number of movements, read straight from the database file."""

    stock: dict[tuple[str, str], tuple[int, int]]
    movements: int

    def on_hand(self, sku: str, warehouse: str = "BER") -> int:
        return self.stock[(warehouse, sku)][0]

    def available(self, sku: str, warehouse: str = "BER") -> int:
        on_hand, reserved = self.stock[(warehouse, sku)]
        return on_hand - reserved


def snapshot(db: Path) -> Snapshot:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        stock = {
            (warehouse, sku): (on_hand, reserved)
            for warehouse, sku, on_hand, reserved in conn.execute(
                "SELECT warehouse, sku, on_hand, reserved FROM inventory_stock"
            )
        }
        (movements,) = conn.execute("SELECT COUNT(*) FROM inventory_movements").fetchone()
    return Snapshot(stock, movements)


@contextlib.asynccontextmanager
async def held_client(url: str, *, mode: Literal["auto", "legacy"] = "legacy") -> AsyncGenerator[Client]:
    """An MCP client entered and exited in one task of its own, so a fixture may set it up and tear it down in
    different tasks (anyio cancel scopes must be left in the task that entered them)."""
    ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def hold() -> None:
        try:
            async with Client(url, mode=mode) as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error)
            raise

    holder = asyncio.create_task(hold())
    try:
        async with asyncio.timeout(20):
            client = await asyncio.shield(ready)
        yield client
    finally:
        stop.set()
        async with asyncio.timeout(20):
            await asyncio.gather(holder, return_exceptions=True)
