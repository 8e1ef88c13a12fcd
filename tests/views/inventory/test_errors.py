"""Every error path of the inventory tools: the exact envelope the agent gets, and that nothing changed."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import Page, expect

from tests.support.e2e import RunningServer, mcp_client
from tests.views.inventory.support import OpenView, on_hand_cell, snapshot, texts

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the shared agent and tab live in the session loop

NOT_FOUND_SKU = (
    '<tool_error code="NOT_FOUND" severity="error">\n'
    "<message>No item has the sku '{sku}'.</message>\n"
    "<recovery>Search with inventory_update to find the sku.</recovery>\n"
    "<available_actions>\n  <action>inventory_update</action>\n</available_actions>\n"
    "</tool_error>"
)
NOT_FOUND_WAREHOUSE = (
    '<tool_error code="NOT_FOUND" severity="error">\n'
    "<message>No warehouse has the code '{code}'.</message>\n"
    "<recovery>List the warehouses with the warehouses tool (action 'list') and use one of their codes.</recovery>\n"
    "<available_actions>\n  <action>warehouses</action>\n</available_actions>\n"
    "</tool_error>"
)
RECOVERY = "<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n"


def insufficient(sku: str, warehouse: str, available: int, requested: int) -> str:
    return (
        '<tool_error code="INSUFFICIENT_STOCK" severity="error">\n'
        f"<message>Only {available} unit(s) of {sku} are available in {warehouse}, but {requested} were requested. "
        "Nothing was changed.</message>\n"
        f"<recovery>Take at most {available}, or move units in from another warehouse with inventory_transfer_stock."
        "</recovery>\n"
        "<available_actions>\n"
        "  <action>inventory_transfer_stock</action>\n"
        "  <action>inventory_adjust_stock</action>\n"
        "</available_actions>\n"
        "<details>\n"
        f'  <detail key="sku">{sku}</detail>\n'
        f'  <detail key="warehouse">{warehouse}</detail>\n'
        f'  <detail key="available">{available}</detail>\n'
        f'  <detail key="requested">{requested}</detail>\n'
        "</details>\n"
        "</tool_error>"
    )


async def refused(agent: Client, db: Path, tool: str, arguments: dict[str, Any]) -> str:
    """Call a tool that must fail; assert the database is untouched and return the single error block."""
    before = snapshot(db)
    result = await agent.call_tool(tool, arguments)
    assert result.is_error
    assert snapshot(db) == before
    (block,) = texts(result)
    return block


async def test_an_unknown_sku_is_not_found_for_adjusting_and_selecting(view: OpenView, agent: Client, db: Path) -> None:
    adjust = {"sku": "NOPE-1", "delta": 3, "reason": "Delivery"}
    assert await refused(agent, db, "inventory_adjust_stock", adjust) == NOT_FOUND_SKU.format(sku="NOPE-1")
    assert await refused(agent, db, "inventory_select_item", {"sku": "nope-2"}) == NOT_FOUND_SKU.format(sku="nope-2")
    transfer = {"sku": "NOPE-3", "from_warehouse": "BER", "to_warehouse": "HAM", "quantity": 1}
    assert await refused(agent, db, "inventory_transfer_stock", transfer) == NOT_FOUND_SKU.format(sku="NOPE-3")


async def test_an_unknown_warehouse_is_not_found_and_the_view_keeps_its_warehouse(
    view: OpenView, agent: Client, tab: Page, db: Path
) -> None:
    shown = await tab.get_by_test_id("row-count").text_content()
    update = {"warehouse_code": "XYZ", "search": "bolt"}
    assert await refused(agent, db, "inventory_update", update) == NOT_FOUND_WAREHOUSE.format(code="XYZ")
    transfer = {"sku": "FST-1001", "from_warehouse": "BER", "to_warehouse": "osl", "quantity": 1}
    assert await refused(agent, db, "inventory_transfer_stock", transfer) == NOT_FOUND_WAREHOUSE.format(code="osl")
    await expect(tab.get_by_test_id("warehouse-code")).to_have_text("BER")
    await expect(tab.get_by_test_id("row-count")).to_have_text(shown or "")
    await expect(tab.get_by_test_id("filter-search")).to_have_value("")


def stored_views(db: Path) -> dict[str, tuple[Any, ...]]:
    """Every view row of the framework's table, by handle."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return {row[0]: row for row in conn.execute("SELECT * FROM webapp_views")}


async def test_opening_with_an_unknown_warehouse_is_not_found_and_opens_or_changes_no_view(
    view: OpenView, agent: Client, tab: Page, server: RunningServer, db: Path
) -> None:
    before = stored_views(db)
    reopened = await agent.call_tool("inventory", {"warehouse_code": "XYZ", "search": "bolt"})
    async with mcp_client(server, mode="legacy") as newcomer:  # a session without a view of its own
        opened = await newcomer.call_tool("inventory", {"warehouse_code": "osl"})
        updated = await newcomer.call_tool("inventory_update", {"warehouse_code": "XYZ"})
    for result, code in ((reopened, "XYZ"), (opened, "osl"), (updated, "XYZ")):
        assert result.is_error and result.structured_content is None
        assert texts(result) == [NOT_FOUND_WAREHOUSE.format(code=code)]
    after = stored_views(db)
    assert after.keys() == before.keys()  # no view was created
    assert after[view.handle] == before[view.handle]  # the agent's view was not reused: same input, data, binding
    await expect(tab.get_by_test_id("warehouse-code")).to_have_text("BER")
    await expect(tab.get_by_test_id("filter-search")).to_have_value("")


async def test_taking_more_than_is_available_is_refused_with_the_numbers_and_changes_nothing(
    view: OpenView, agent: Client, tab: Page, db: Path
) -> None:
    stock = snapshot(db)
    available = stock.available("ELE-4003")
    take = {"sku": "ELE-4003", "delta": -(available + 1), "reason": "Big order"}
    expected = insufficient("ELE-4003", "BER", available, available + 1)
    assert await refused(agent, db, "inventory_adjust_stock", take) == expected
    await expect(on_hand_cell(tab, "ELE-4003")).to_have_text(f"{stock.on_hand('ELE-4003'):,}")

    spare = stock.available("ELE-4003", "HAM")
    move = {"sku": "ELE-4003", "from_warehouse": "HAM", "to_warehouse": "BER", "quantity": spare + 5}
    assert await refused(agent, db, "inventory_transfer_stock", move) == insufficient(
        "ELE-4003", "HAM", spare, spare + 5
    )


async def test_bad_arguments_get_a_validation_error_and_change_nothing(view: OpenView, agent: Client, db: Path) -> None:
    zero = await refused(agent, db, "inventory_adjust_stock", {"sku": "FST-1001", "delta": 0, "reason": "count"})
    assert zero == (
        '<validation_error action="inventory_adjust_stock">\n'
        '<field name="delta">delta must not be 0: send a positive number to add units or a negative one to take '
        "them. You sent: 0.</field>\n" + RECOVERY + "</validation_error>"
    )
    typo = await refused(agent, db, "inventory_adjust_stock", {"sku": "FST-1001", "delta": 2, "reason": "", "qty": 2})
    assert typo == (
        '<validation_error action="inventory_adjust_stock">\n'
        "<field name=\"reason\">String should have at least 1 character You sent: ''.</field>\n"
        "<field name=\"qty\">Extra inputs are not permitted You sent: 2. Remove or correct unrecognized fields: 'qty'. "
        "Check for typos.</field>\n" + RECOVERY + "</validation_error>"
    )
    same = {"sku": "FST-1001", "from_warehouse": "BER", "to_warehouse": "ber", "quantity": 1}
    assert await refused(agent, db, "inventory_transfer_stock", same) == (
        '<validation_error action="inventory_transfer_stock">\n'
        '<field name="to_warehouse">to_warehouse must differ from from_warehouse: a transfer moves units between two '
        "warehouses. You sent: 'ber'.</field>\n" + RECOVERY + "</validation_error>"
    )
    report = await refused(agent, db, "inventory_stock_report", {"group_by": "supplier"})
    assert report == (
        '<validation_error action="inventory_stock_report">\n'
        "<field name=\"group_by\">Input should be 'category' or 'warehouse' You sent: 'supplier'. "
        "Valid options: 'category', 'warehouse'.</field>\n" + RECOVERY + "</validation_error>"
    )


async def test_the_tool_list_shows_every_inventory_tool_with_strict_schemas(agent: Client) -> None:
    tools = {tool.name: tool for tool in (await agent.list_tools()).tools}
    assert list(tools) == [
        "warehouses",
        "inventory",
        "inventory_update",
        "inventory_refresh_stock",
        "inventory_adjust_stock",
        "inventory_select_item",
        "inventory_stock_report",
        "inventory_export_stock",
        "inventory_transfer_stock",
        "webapp_tunnel_open",  # a tunnelled view's own (app-only), listed for every caller
        "webapp_tunnel_http",
        "webapp_tunnel_close",
    ]
    assert all(tool.input_schema["additionalProperties"] is False for tool in tools.values())
    app_only = [name for name, tool in tools.items() if (tool.meta or {}).get("ui", {}).get("visibility") == ["app"]]
    assert app_only == ["webapp_tunnel_open", "webapp_tunnel_http", "webapp_tunnel_close"]
    assert tools["inventory"].input_schema["properties"]["warehouse_code"]["default"] == "BER"
    assert tools["inventory_update"].input_schema == tools["inventory"].input_schema
    assert "_select" not in tools["inventory"].input_schema["properties"]
    select = tools["inventory_adjust_stock"].input_schema["properties"]["_select"]["items"]["enum"]
    assert "supplier_email" in select and "group" in select and "supplier_cost_cents" not in select
    assert tools["inventory_adjust_stock"].input_schema["required"] == ["sku", "delta", "reason"]
    assert tools["inventory_refresh_stock"].output_schema is not None
