"""The `warehouses` tool: a plain tool with two actions (`list`, `get`) that needs no open view."""

from __future__ import annotations

from typing import Any

from actions.domain import norm_code
from actions.inputs import WarehouseGetInput
from actions.presenters import WAREHOUSES
from actions.shapes import warehouse_data
from actions.store import InventoryStore
from actions.tool_errors import unknown_warehouse
from webapp import BuiltResult, Tool

__all__ = ["DESCRIPTION", "warehouses_tool"]

DESCRIPTION = "Lists the warehouses with their totals, or gets one by its code"


def warehouses_tool(store: InventoryStore) -> Tool:
    """The tool over `store`: rows `{code, name, city, items, units_on_hand}` through the Warehouse Presenter."""

    def list_warehouses() -> list[dict[str, Any]]:
        return [warehouse_data(summary) for summary in store.list_warehouses()]

    def get_warehouse(params: WarehouseGetInput) -> dict[str, Any] | BuiltResult:
        code = norm_code(params.code)
        for summary in store.list_warehouses():
            if summary.code == code:
                return warehouse_data(summary)
        return unknown_warehouse(params.code)

    return (
        Tool("warehouses", description=DESCRIPTION)
        .action(
            "list",
            list_warehouses,
            returns=WAREHOUSES,
            description="All warehouses with their item count and units on hand",
        )
        .action(
            "get",
            get_warehouse,
            input=WarehouseGetInput,
            returns=WAREHOUSES,
            description="One warehouse by its code",
        )
        .toon_description()
        .enable_select()
    )
