"""The stock table: sortable columns, low stock (`available < reorder_point`) highlighted, rows a person can pick.

A few changed rows travel to the browser as a row patch (`patchRows` of `stock_table.js`), other rows as the new row
list (`setRows`), both with the change's method calls (`BrowserCalls`), while the server-side rows are kept in sync
for a tab built later. Quasar's table (sorting, virtual scroll) stays; only the rows that changed render again.

The server's rows are a plain list, put into the prop past NiceGUI's observables (`keep`) and patched in place: NiceGUI
wraps the lists and dicts put into props in observable copies, and a new list or tuple per change would touch every
row of every watching view, either of which cost more than the rest of the change. The row dicts are shared between
views and never mutated.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from nicegui import events, ui

from actions.domain import StockRow
from views.inventory.calls import BrowserCalls, Call, encode_arguments, keep

__all__ = ["StockTable", "TableRows"]


def _column(name: str, label: str, *, numeric: bool = False, money: bool = False, **extra: Any) -> dict[str, Any]:
    column: dict[str, Any] = {"name": name, "label": label, "field": name, "sortable": True}
    column["align"] = "right" if numeric or money else "left"
    if money or numeric:
        column["formatter"] = "money" if money else "number"  # stock_table.js turns it into the cell's format
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

_SLICE = 100  # rows rendered around the ones in view (a warehouse of the demo's size is rendered whole)
_PATCH_SHARE = 4  # patch when at most a quarter of the rows changed; else one whole-table update is smaller


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


@functools.lru_cache(maxsize=64)
def _patch_rows(changed: tuple[StockRow, ...], selected: str | None) -> tuple[dict[str, Any], ...]:
    """A change's rows: made once for the views of the warehouse with the same selection (never mutated)."""
    return tuple(_row(row, selected) for row in changed)


def _sent(before: dict[str, Any] | None, row: dict[str, Any]) -> dict[str, Any]:
    """What a patch sends of `row`: all of it when the table does not show it yet, else its sku and what changed (a
    stock change changes a few figures of a row, and the tab's row takes them in place)."""
    if before is None:
        return row
    return {"sku": row["sku"]} | {name: value for name, value in row.items() if before[name] != value}


class TableRows:
    """The rows the tables of the views of one shared stock show: one plain list of row dicts, which every such
    table's `rows` prop is, patched in place once for all of them. The row dicts are shared and never mutated."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self._places: dict[str, int] = {}  # the place of each sku in the rows

    def show(self, rows: Sequence[StockRow], selected: str | None) -> Call | None:
        """Show exactly `rows`: the call that brings a table showing the rows before to them (None: no change)."""
        new = [_row(row, selected) for row in rows]
        call = _difference(self.rows, new)
        if call is not None:
            self._set(new)
        return call

    def apply(self, changed: Sequence[StockRow], removed: Sequence[str], selected: str | None) -> Call:
        """Changed (or newly shown) rows and the skus of rows no longer shown, as a patch."""
        patched, places, rows = _patch_rows(tuple(changed), selected), self._places, self.rows
        sent = [_sent(rows[place] if (place := places.get(row["sku"])) is not None else None, row) for row in patched]
        arguments = encode_arguments(sent, removed)
        if removed or not all(row["sku"] in places for row in patched):
            merged = {row["sku"]: row for row in self.rows} | {row["sku"]: row for row in patched}
            self._set([row for sku, row in merged.items() if sku not in removed])
        else:  # the same items: each changed row takes its place
            for row in patched:
                rows[places[row["sku"]]] = row
        return "table", "patchRows", arguments

    def _set(self, rows: list[dict[str, Any]]) -> None:
        self.rows[:] = rows  # in place: it is every table's prop
        self._places = {row["sku"]: place for place, row in enumerate(rows)}


def _difference(old: Sequence[dict[str, Any]], new: list[dict[str, Any]]) -> Call | None:
    """A patch when the same items stay and few of them changed, else the whole rows (None: the same rows)."""
    same = [row["sku"] for row in new] == [row["sku"] for row in old]
    changed = [row for row, before in zip(new, old, strict=True) if row != before] if same else new
    if same and len(changed) * _PATCH_SHARE <= len(new):
        return ("table", "patchRows", encode_arguments(changed, ())) if changed else None
    return "table", "setRows", encode_arguments(new)


class _Table(ui.table, component="stock_table.js"):
    """`ui.table` with a browser-side row patch."""

    @property
    def pagination(self) -> dict[str, Any]:
        return self._props["pagination"]

    @pagination.setter
    def pagination(self, value: dict[str, Any]) -> None:
        """The tab's sort, which Quasar reports when the table mounts and on every sort, kept as the server's copy
        without an update: the tab has it, and NiceGUI's update would send the whole table, rows and all, back."""
        keep(self, "pagination", value)


class StockTable:
    """One view's table of a shared stock's rows (`TableRows`); clicking a row (or Enter on it) calls `on_pick(sku)`."""

    def __init__(self, on_pick: Callable[[str], None], on_unpick: Callable[[], None]) -> None:
        """`on_unpick()`: Escape on a row (the item panel closes)."""
        self._on_pick = on_pick
        self.table = (
            _Table(columns=_COLUMNS, rows=[], row_key="sku", pagination={"rowsPerPage": 0, "sortBy": "sku"})
            .classes("inventory-stock w-full")
            .props('flat dense hide-bottom data-testid="stock-table"')
            # Quasar renders the rows in view and a slice around them: a long table costs what a short one does
            .props(f'virtual-scroll :virtual-scroll-slice-size="{_SLICE}" :virtual-scroll-sticky-size-start="33"')
        )
        self.table.on("rowClick", self._clicked)
        self.table.on("rowEscape", lambda: on_unpick())
        self.empty = ui.label("No item matches the filters.").classes("text-sm text-gray-500 px-4 py-6")
        self.empty.set_visibility(False)

    def show(self, rows: TableRows, calls: BrowserCalls) -> None:
        """Show a shared stock's rows (those of another, or none, before): the tab gets what differs."""
        old: list[dict[str, Any]] = self.table.props["rows"]
        if old is not rows.rows:
            keep(self.table, "rows", rows.rows)
            if not old:  # a table being built, or empty: its element carries the rows
                self.table.update()
            elif (call := _difference(old, rows.rows)) is not None:
                calls.encoded(self.table, call[1], call[2])
        self.show_empty()

    def show_empty(self) -> None:
        """The line that says no item matches, when none does."""
        empty = not self.table.props["rows"]
        if self.empty.visible != empty:
            self.empty.set_visibility(empty)

    def resend(self, calls: BrowserCalls) -> None:
        calls.method(self.table, "setRows", self.table.props["rows"])

    def _clicked(self, event: events.GenericEventArguments) -> None:
        args = event.args
        if isinstance(args, list) and len(args) > 1 and isinstance(args[1], dict):
            sku = args[1].get("sku")
            if isinstance(sku, str):
                self._on_pick(sku)
