"""The inventory's prompts: restock what is low in a warehouse, explain an item's movements; and the completion of
their warehouse and SKU arguments. The view class declares them (`@mcp_app_prompt`); the text is written here."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from actions.domain import InventoryError
from actions.store import InventoryStore

__all__ = [
    "ItemArguments",
    "WarehouseArguments",
    "complete_sku",
    "complete_warehouse",
    "explain_movements",
    "restock_low",
]

_MOVEMENTS = 20  # the newest movements an explanation looks at


class WarehouseArguments(BaseModel):
    warehouse_code: str = Field(description="The warehouse's code, e.g. BER")


class ItemArguments(BaseModel):
    warehouse_code: str = Field(description="The warehouse's code, e.g. BER")
    sku: str = Field(description="The item's SKU, e.g. PLB-7002")


def restock_low(store: InventoryStore, arguments: WarehouseArguments) -> str:
    """Ask the agent to plan restocking the low items of a warehouse, with their figures."""
    try:
        warehouse = store.get_warehouse(arguments.warehouse_code.upper())
    except InventoryError as error:
        return _unknown(store, error)
    low = store.list_stock(warehouse.code, low_stock_only=True, sort="available")
    lines = [f"- {row.sku} {row.name}: {row.available} available, reorder point {row.reorder_point}" for row in low]
    listed = "\n".join(lines) if lines else "(no item is below its reorder point)"
    return (
        f"The items of warehouse {warehouse.code} ({warehouse.name}) whose available stock is below the reorder "
        f"point:\n{listed}\n\nPropose how many units of each to order so that it is back above its reorder point. "
        f'Open the view with the inventory tool (warehouse_code="{warehouse.code}", low_stock_only=true) so the '
        "person can follow, and book a delivery with inventory_adjust_stock only after the person agreed."
    )


def explain_movements(store: InventoryStore, arguments: ItemArguments) -> str:
    """Ask the agent to explain an item's newest movements in a warehouse."""
    warehouse, sku = arguments.warehouse_code.upper(), arguments.sku.upper()
    try:
        row = store.get_stock(sku, warehouse)
    except InventoryError as error:
        return _unknown(store, error)
    movements = store.recent_movements(warehouse, sku=sku, limit=_MOVEMENTS)
    lines = [
        f"- {m.at:%Y-%m-%d %H:%M} UTC {m.delta:+d} by {m.actor} ({m.reason}), on hand after: {m.on_hand_after}"
        for m in movements
    ]
    listed = "\n".join(lines) if lines else "(no movement recorded)"
    return (
        f"{row.sku} {row.name} in warehouse {warehouse}: {row.on_hand} on hand, {row.reserved} reserved, "
        f"reorder point {row.reorder_point}. Its newest movements, newest first:\n{listed}\n\n"
        "Explain to the person what happened to this item's stock and whether anything looks unusual."
    )


def _unknown(store: InventoryStore, error: InventoryError) -> str:
    codes = ", ".join(summary.code for summary in store.list_warehouses())
    return f"{error} Tell the person, and ask which warehouse ({codes}) and item they mean."


def complete_warehouse(store: InventoryStore, value: str) -> list[str]:
    """The warehouse codes that start with `value` (any case)."""
    typed = value.upper()
    return [summary.code for summary in store.list_warehouses() if summary.code.startswith(typed)]


def complete_sku(store: InventoryStore, value: str, context: Mapping[str, str]) -> list[str]:
    """The SKUs of the warehouse already given (else the default one) that start with `value` (any case)."""
    try:
        warehouse = store.get_warehouse(context.get("warehouse_code", "").upper()).code
    except InventoryError:
        warehouse = store.default_warehouse().code
    typed = value.upper()
    return [row.sku for row in store.list_stock(warehouse) if row.sku.startswith(typed)]
