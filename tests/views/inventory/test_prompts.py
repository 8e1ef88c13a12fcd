"""The inventory's prompts through the official client: listed with their arguments, written from the database, their
warehouse and SKU arguments completed; an unknown warehouse answered in words."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import mcp_types
import pytest
from mcp import Client

pytestmark = pytest.mark.asyncio(loop_scope="session")


def _text(result: mcp_types.GetPromptResult) -> str:
    content = result.messages[0].content
    assert isinstance(content, mcp_types.TextContent), content
    return content.text


async def test_the_inventory_lists_its_two_prompts_with_their_arguments(agent: Client) -> None:
    prompts = {prompt.name: prompt for prompt in (await agent.list_prompts()).prompts}
    assert set(prompts) == {"inventory_restock", "inventory_explain_item"}
    assert [a.name for a in prompts["inventory_explain_item"].arguments or []] == ["warehouse_code", "sku"]
    assert all(prompt.description for prompt in prompts.values())


async def test_the_restock_prompt_names_every_low_item_of_the_warehouse(agent: Client, db: Path) -> None:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        low = {
            sku
            for (sku,) in conn.execute(
                "SELECT s.sku FROM inventory_stock s JOIN inventory_items i ON i.sku = s.sku "
                "WHERE s.warehouse = 'HAM' AND s.on_hand - s.reserved < i.reorder_point"
            )
        }
    text = _text(await agent.get_prompt("inventory_restock", {"warehouse_code": "ham"}))
    named = {line[2:].split(" ")[0] for line in text.splitlines() if line.startswith("- ")}
    assert text.startswith("The items of warehouse HAM") and "inventory_adjust_stock" in text
    assert low and named == low


async def test_the_explain_prompt_shows_the_items_figures_and_movements(agent: Client) -> None:
    text = _text(await agent.get_prompt("inventory_explain_item", {"warehouse_code": "BER", "sku": "plb-7002"}))
    assert text.startswith("PLB-7002 ") and " in warehouse BER: " in text and "newest movements" in text
    unknown = _text(await agent.get_prompt("inventory_explain_item", {"warehouse_code": "XXX", "sku": "PLB-7002"}))
    assert "XXX" in unknown and "BER" in unknown


async def test_prompt_arguments_complete_to_warehouses_and_the_warehouses_skus(agent: Client) -> None:
    ref = mcp_types.PromptReference(type="ref/prompt", name="inventory_explain_item")
    codes = (await agent.complete(ref, {"name": "warehouse_code", "value": "b"})).completion.values
    skus = await agent.complete(ref, {"name": "sku", "value": "plb-"}, context_arguments={"warehouse_code": "BER"})
    assert codes == ["BER"]
    assert skus.completion.values and all(sku.startswith("PLB-") for sku in skus.completion.values)
