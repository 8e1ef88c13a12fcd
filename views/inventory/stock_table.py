"""The stock table: sortable columns, low stock (`available < reorder_point`) highlighted, rows a person can pick."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from nicegui import events, ui

from actions.domain import StockRow

__all__ = ["StockTable"]

_MONEY = "val => '€' + (val / 100).toLocaleString('en-US', {minimumFractionDigits: 2, maximumFractionDigits: 2})"
_NUMBER = "val => val.toLocaleString('en-US')"


def _column(name: str, label: str, *, numeric: bool = False, money: bool = False, **extra: Any) -> dict[str, Any]:
    column: dict[str, Any] = {"name": name, "label": label, "field": name, "sortable": True}
    column["align"] = "right" if numeric or money else "left"
    if money:
        column[":format"] = _MONEY
    elif numeric:
        column[":format"] = _NUMBER
    return column | extra


_COLUMNS = [
    _column("sku", "SKU", classes="font-mono text-xs", headerClasses="font-mono"),
    _column("name", "Item", classes="max-w-[12rem] truncate"),
    _column("category", "Category"),
    _column("on_hand", "On hand", numeric=True),
    _column("reserved", "Reserved", numeric=True),
    _column("available", "Available", numeric=True),
    _column("reorder_point", "Reorder", numeric=True),
    _column("unit_cost_cents", "Unit cost", money=True),
    _column("stock_value_cents", "Value", money=True),
]

_ROW_CLASS = "row => (row.selected ? 'row-selected ' : '') + (row.low_stock ? 'row-low' : '')"
_AVAILABLE_CELL = r"""
<q-td :props="props">
  <q-badge v-if="props.row.low_stock" color="amber-2" text-color="amber-10" class="text-sm font-medium px-2"
           :label="props.value.toLocaleString('en-US')">
    <q-tooltip>Below the reorder point of {{ props.row.reorder_point }}</q-tooltip>
  </q-badge>
  <span v-else>{{ props.value.toLocaleString('en-US') }}</span>
</q-td>
"""


def _row(row: StockRow, selected: str | None) -> dict[str, Any]:
    return {
        "sku": row.sku,
        "name": row.name,
        "category": row.category,
        "unit": row.unit,
        "on_hand": row.on_hand,
        "reserved": row.reserved,
        "available": row.available,
        "reorder_point": row.reorder_point,
        "unit_cost_cents": row.unit_cost_cents,
        "stock_value_cents": row.stock_value_cents,
        "low_stock": row.low_stock,
        "selected": row.sku == selected,
    }


class StockTable:
    """`update()` replaces the rows in place; clicking a row calls `on_pick(sku)`."""

    def __init__(self, on_pick: Callable[[str], None]) -> None:
        self._on_pick = on_pick
        self.table = (
            ui.table(columns=_COLUMNS, rows=[], row_key="sku", pagination={"rowsPerPage": 0, "sortBy": "sku"})
            .classes("inventory-stock w-full")
            .props('flat dense hide-bottom data-testid="stock-table"')
            .props(f':table-row-class-fn="{_ROW_CLASS}"')
        )
        self.table.add_slot("body-cell-available", _AVAILABLE_CELL)
        self.table.on("rowClick", self._clicked)
        self.empty = ui.label("No item matches the filters.").classes("text-sm text-gray-500 px-4 py-6")
        self.empty.set_visibility(False)

    def update(self, rows: Sequence[StockRow], selected: str | None) -> None:
        self.table.rows = [_row(row, selected) for row in rows]
        self.table.update()
        self.empty.set_visibility(not rows)

    def _clicked(self, event: events.GenericEventArguments) -> None:
        args = event.args
        if isinstance(args, list) and len(args) > 1 and isinstance(args[1], dict):
            sku = args[1].get("sku")
            if isinstance(sku, str):
                self._on_pick(sku)
